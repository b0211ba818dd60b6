package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.cache.AppliedObjects;
import io.oncestream.testing.LocalService;

/**
 * The workers' StatefulSet as the operator applies it, its digest annotation included, is held
 * to committed files under {@code src/test/resources/formats/}: the digest is compared with the one
 * on every existing StatefulSet after an upgrade, so a build that renders an unchanged job
 * differently re-applies the StatefulSet of every job at its first reconcile (with thousands of
 * jobs, thousands of writes at once, and a rolling restart where the pod template changed).
 * A change here must be meant, and said in the release notes.
 */
class WorkerStatefulSetFormatTest {

    private static final WorkerSettings SETTINGS = new WorkerSettings("oncestream/oncestream:1.0.0", "IfNotPresent", 30);

    private static final String METADATA = """
            apiVersion: oncestream.io/v1alpha1
            kind: StreamJob
            metadata: {name: orders, namespace: shop, uid: u-1, generation: 1}
            """;

    private static final String REQUIRED_ONLY = METADATA + """
            spec:
              source: {kafka: {bootstrapServers: "kafka:9092", topics: [orders]}}
              sink:
                cassandra: {contactPoints: ["cassandra:9042"], localDatacenter: dc1, keyspace: shop, table: orders,
                            columns: {id: value.id}}
            """;

    /** Every spec field that reaches the StatefulSet. */
    private static final String EVERY_FIELD = METADATA + """
            spec:
              source: {kafka: {bootstrapServers: "kafka:9092", topics: [orders], secretRef: {name: kafka-creds}}}
              sink:
                cassandra: {contactPoints: ["cassandra:9042"], localDatacenter: dc1, keyspace: shop, table: orders,
                            columns: {id: value.id}, secretRef: {name: cassandra-creds}}
              trigger: {availableNow: true}
              parallelism: 3
              checkpoint: {size: 5Gi, storageClassName: fast, accessMode: ReadWriteOncePod, whenDeleted: Delete, whenScaled: Delete}
              worker:
                image: registry.example/oncestream:custom
                jvmOptions: -Xss512k
                nodeSelector: {disk: ssd}
                tolerations: [{key: dedicated, operator: Equal, value: stream, effect: NoSchedule}]
                resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 512Mi}}
            """;

    @Test
    void aJobWithOnlyTheRequiredFieldsRendersTheCommittedStatefulSet() throws IOException {
        assertRenders(REQUIRED_ONLY, false, "worker-statefulset-required-only.yaml");
    }

    @Test
    void aJobWithEveryFieldRendersTheCommittedStatefulSet() throws IOException {
        assertRenders(EVERY_FIELD, false, "worker-statefulset-every-field.yaml");
    }

    @Test
    void aDrainedJobRendersTheCommittedStatefulSet() throws IOException {
        assertRenders(EVERY_FIELD, true, "worker-statefulset-drained.yaml");
    }

    private static void assertRenders(String yaml, boolean drained, String file) throws IOException {
        StreamJob job = Serialization.unmarshal(yaml, StreamJob.class);
        String written = Serialization.asYaml(AppliedObjects.stamped(WorkerStatefulSets.desired(job, SETTINGS,
                WorkerConfigMaps.hash(WorkerJobConfigs.from(job)), drained, -1)));
        Path golden = LocalService.repoDir().resolve("src/test/resources/formats").resolve(file);
        if (!Files.exists(golden) || !Files.readString(golden).equals(written)) {
            Path actual = LocalService.repoDir().resolve("target/formats").resolve(file);
            Files.createDirectories(actual.getParent());
            Files.writeString(actual, written);
        }
        assertThat(written).as("the StatefulSet as applied (written to target/formats/" + file + ")")
                .isEqualTo(Files.readString(golden));
    }
}
