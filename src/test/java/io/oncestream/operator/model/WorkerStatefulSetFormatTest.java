package io.oncestream.operator.model;

import java.io.IOException;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.cache.AppliedObjects;

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

    /** Every spec field that reaches the StatefulSet. */
    private static final String EVERY_FIELD = CommittedFormats.METADATA + """
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
        assertRenders(CommittedFormats.REQUIRED_ONLY, false, "worker-statefulset-required-only.yaml");
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
        CommittedFormats.assertMatches(written, file, "the StatefulSet as applied");
    }
}
