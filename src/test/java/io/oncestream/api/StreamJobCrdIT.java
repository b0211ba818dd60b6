package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.model.WorkerConfigMaps;
import io.oncestream.operator.model.WorkerJobConfigs;
import io.oncestream.operator.model.WorkerServices;
import io.oncestream.operator.model.WorkerSettings;
import io.oncestream.operator.model.WorkerStatefulSets;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.Command;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalService;

/**
 * The committed StreamJob CRD on the real API server: defaults, explain, manifests kubectl
 * apply rejects, and the worker objects built for a job, accepted and garbage-collected.
 */
@ExtendWith(KubeExtension.class)
class StreamJobCrdIT {

    private static String namespace;


    @BeforeAll
    static void installCrd(KubeCluster kube) {
        kube.kubectl(null, "apply", "-f", LocalService.repoDir().resolve("crds/streamjobs.oncestream.io-v1.yml").toString())
                .orThrow();
        kube.kubectl(null, "wait", "--for=condition=Established", "--timeout=60s", "crd/streamjobs.oncestream.io").orThrow();
        namespace = kube.createNamespace("crd");
    }

    /** Its jobs would otherwise be run by the operators of later test classes, which watch every namespace. */
    @AfterAll
    static void deleteNamespace(KubeCluster kube) {
        kube.deleteNamespaces(Duration.ofSeconds(120), List.of(namespace));
    }

    @Test
    void validManifestIsAcceptedWithDefaults(KubeCluster kube) {
        kube.kubectl(manifest("valid", Map.of()), "apply", "-f", "-").orThrow();
        Command.Result got = kube.kubectl(null, "get", "sj", "valid", "-n", namespace, "-o",
                "jsonpath={.spec.format} {.spec.parallelism} {.spec.source.kafka.startingOffsets} "
                        + "{.spec.source.kafka.maxRecordsPerBatch} {.spec.sink.cassandra.consistency} {.spec.suspend}").orThrow();
        assertThat(got.stdout()).isEqualTo("json 1 earliest 50000 LOCAL_QUORUM false");

        String table = kube.kubectl(null, "get", "streamjobs", "-n", namespace).orThrow().stdout();
        assertThat(table.lines().findFirst().orElse("").trim().split("\\s+"))
                .as("kubectl get streamjobs columns").containsExactly("NAME", "PHASE", "BATCH", "LAG", "LAG-SECONDS", "RATE", "AGE");

        String explained = kube.kubectl(null, "explain", "streamjob.spec.source.kafka.startingOffsets").orThrow().stdout();
        assertThat(explained).contains("Where a job without a checkpoint starts");
    }

    @Test
    void examplesAreAcceptedByTheApiServer(KubeCluster kube) throws Exception {
        try (var files = java.nio.file.Files.list(LocalService.repoDir().resolve("deploy/examples"))) {
            var examples = files.filter(f -> f.toString().endsWith(".yaml")).toList();
            assertThat(examples).isNotEmpty();
            for (var example : examples) {
                Command.Result result = kube.kubectl(null, "apply", "--dry-run=server", "-n", namespace, "-f", example.toString());
                assertThat(result.exitCode()).as(example + ": " + result.stderr()).isZero();
                assertThat(result.stdout()).contains("created (server dry run)");
            }
        }
    }

    @Test
    void builtWorkerObjectsAreAcceptedAndCollectedWithTheirJob(KubeCluster kube) {
        kube.kubectl(manifest("owned", Map.of("  filter:", "  parallelism: 2\n  filter:")), "apply", "-f", "-").orThrow();
        var client = kube.admin();
        StreamJob job = client.resources(StreamJob.class).inNamespace(namespace).withName("owned").get();
        JobConfig config = WorkerJobConfigs.from(job);
        WorkerSettings settings = new WorkerSettings("oncestream/oncestream:test", "IfNotPresent", 30);
        client.resource(WorkerConfigMaps.desired(job, config)).create();
        client.resource(WorkerServices.desired(job)).create();
        client.resource(WorkerStatefulSets.desired(job, settings, WorkerConfigMaps.hash(config))).create();

        // The real StatefulSet controller accepts the pod template: two worker pods appear.
        Awaits.until(Duration.ofSeconds(60), "pods owned-0 and owned-1", () -> client.pods().inNamespace(namespace)
                .withLabels(StreamJobResources.selectorLabels("owned")).list().getItems().size() == 2);
        assertThat(client.pods().inNamespace(namespace).withName("owned-0").get().getSpec().getSecurityContext()
                .getRunAsNonRoot()).isTrue();

        client.resources(StreamJob.class).inNamespace(namespace).withName("owned").delete();
        Awaits.until(Duration.ofSeconds(90), "garbage collection of the job's ConfigMap, Service and StatefulSet", () ->
                client.configMaps().inNamespace(namespace).withName(StreamJobResources.configMapName("owned")).get() == null
                        && client.services().inNamespace(namespace).withName(StreamJobResources.serviceName("owned")).get() == null
                        && client.apps().statefulSets().inNamespace(namespace).withName("owned").get() == null);
    }

    static Object[][] invalidManifests() {
        return new Object[][] {
            {"no-source", Map.of("  source:\n    kafka: {bootstrapServers: \"kafka:9092\", topics: [orders]}\n", ""),
                "spec.source: Required value"},
            {"no-table", Map.of("      table: paid_orders\n", ""), "spec.sink.cassandra.table: Required value"},
            {"no-topics", Map.of("topics: [orders]", "topics: []"), "spec.source.kafka.topics: Invalid value"},
            {"bad-topic", Map.of("topics: [orders]", "topics: [\"no spaces\"]"), "spec.source.kafka.topics[0]: Invalid value"},
            {"bad-start", Map.of("topics: [orders]}", "topics: [orders], startingOffsets: middle}"),
                "Unsupported value: \"middle\""},
            {"zero-batch", Map.of("topics: [orders]}", "topics: [orders], maxRecordsPerBatch: 0}"),
                "should be greater than or equal to 1"},
            {"too-parallel", Map.of("  filter:", "  parallelism: 1000\n  filter:"), "should be less than or equal to 256"},
            {"no-port", Map.of("\"kafka:9092\"", "\"kafka\""), "spec.source.kafka.bootstrapServers: Invalid value"},
            {"bad-keyspace", Map.of("keyspace: shop", "keyspace: 1shop"), "spec.sink.cassandra.keyspace: Invalid value"},
            {"dead-letter-table", Map.of("  filter:", "  deadLetter: {mode: table}\n  filter:"),
                "table is required when mode is table"},
            {"bad-interval", Map.of("  filter:", "  trigger: {interval: soon}\n  filter:"), "spec.trigger.interval: Invalid value"},
            {"no-columns", Map.of("columns: {order_id: value.id, amount: value.amount}", "columns: {}"),
                "spec.sink.cassandra.columns: Invalid value"},
            {"bad-contact-point", Map.of("[\"cassandra:9042\"]", "[\"cassandra\"]"),
                "spec.sink.cassandra.contactPoints[0]: Invalid value"},
            {"bad-consistency", Map.of("      table: paid_orders\n", "      table: paid_orders\n      consistency: SOME\n"),
                "Unsupported value: \"SOME\""},
            {"bad-format", Map.of("  filter:", "  format: xml\n  filter:"), "Unsupported value: \"xml\""},
            {"jvm-options-not-options", Map.of("  filter:", "  worker: {jvmOptions: \"-Xmx1g Main\"}\n  filter:"),
                "spec.worker.jvmOptions: Invalid value"},
            {"autoscale-bounds", Map.of("  filter:", "  autoscaling: {minParallelism: 4, maxParallelism: 2}\n  filter:"),
                "maxParallelism must be at least minParallelism"},
            {"autoscale-no-max", Map.of("  filter:", "  autoscaling: {minParallelism: 2}\n  filter:"),
                "spec.autoscaling.maxParallelism: Required value"},
            {"jvm-options-too-long", Map.of("  filter:", "  worker: {jvmOptions: \"-D" + "x".repeat(1023) + "\"}\n  filter:"),
                "spec.worker.jvmOptions: Too long"},
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidManifests")
    void invalidManifestIsRejectedByKubectlApply(String name, Map<String, String> edit, String expected, KubeCluster kube) {
        Command.Result result = kube.kubectl(manifest(name, edit), "apply", "-f", "-");
        assertThat(result.exitCode()).as(result.stdout()).isNotZero();
        assertThat(result.stderr()).contains(expected);
        assertThat(kube.kubectl(null, "get", "sj", name, "-n", namespace).exitCode()).as("nothing was stored").isNotZero();
    }

    /**
     * {@code spec.checkpoint.accessMode} defaults to ReadWriteOnce, takes ReadWriteOncePod, and
     * cannot change on a stored job (the StatefulSet's claim templates could not follow): the
     * API server refuses the change at apply.
     */
    @Test
    void theCheckpointAccessModeIsSetOnceAtApply(KubeCluster kube) {
        Map<String, String> rwop = Map.of("  filter:", "  checkpoint: {accessMode: ReadWriteOncePod}\n  filter:");
        kube.kubectl(manifest("rwop", rwop), "apply", "-f", "-").orThrow();
        assertThat(kube.kubectl(null, "get", "sj", "rwop", "-n", namespace, "-o", "jsonpath={.spec.checkpoint.accessMode}")
                .orThrow().stdout()).isEqualTo("ReadWriteOncePod");
        Command.Result changed = kube.kubectl(manifest("rwop", Map.of("  filter:", "  checkpoint: {accessMode: ReadWriteOnce}\n"
                + "  filter:")), "apply", "-f", "-");
        assertThat(changed.exitCode()).as(changed.stdout()).isNotZero();
        assertThat(changed.stderr()).contains("spec.checkpoint.accessMode").contains("cannot change on an existing job");
        Command.Result unknown = kube.kubectl(manifest("rwx", Map.of("  filter:", "  checkpoint: {accessMode: ReadWriteMany}\n"
                + "  filter:")), "apply", "-f", "-");
        assertThat(unknown.stderr()).contains("Unsupported value: \"ReadWriteMany\"");
        kube.kubectl(manifest("rwo", Map.of("  filter:", "  checkpoint: {size: 1Gi}\n  filter:")), "apply", "-f", "-").orThrow();
        assertThat(kube.kubectl(null, "get", "sj", "rwo", "-n", namespace, "-o", "jsonpath={.spec.checkpoint.accessMode}")
                .orThrow().stdout()).as("the default").isEqualTo("ReadWriteOnce");
        // A job stored without spec.checkpoint has ReadWriteOnce claims: it cannot gain ReadWriteOncePod later either.
        kube.kubectl(manifest("bare", Map.of()), "apply", "-f", "-").orThrow();
        Command.Result added = kube.kubectl(manifest("bare", rwop), "apply", "-f", "-");
        assertThat(added.exitCode()).as(added.stdout()).isNotZero();
        assertThat(added.stderr()).contains("spec.checkpoint.accessMode").contains("cannot change on an existing job");
        kube.kubectl(manifest("bare", Map.of("  filter:", "  checkpoint: {accessMode: ReadWriteOnce}\n  filter:")), "apply",
                "-f", "-").orThrow();
    }

    /** A name whose objects could not all be made is refused at apply; the longest that fits is accepted. */
    @Test
    void aNameTooLongForTheJobsObjectsIsRejectedByKubectlApply(KubeCluster kube) {
        String longest = "n" + "x".repeat(StreamJobResources.MAX_NAME_LENGTH - 1);
        String tooLong = longest + "y";
        Command.Result refused = kube.kubectl(manifest(tooLong, Map.of()), "apply", "-f", "-");
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.stderr()).contains("metadata.name must have at most 52 characters");
        Command.Result accepted = kube.kubectl(manifest(longest, Map.of()), "apply", "-f", "-");
        assertThat(accepted.exitCode()).as(accepted.stderr()).isZero();
        // The names and labels the operator derives from it are all valid.
        assertThat(StreamJobResources.serviceName(longest).length()).isLessThanOrEqualTo(63);
        assertThat((StreamJobResources.statefulSetName(longest) + "-" + "0123456789").length()).isEqualTo(63);
    }

    /**
     * A name Kubernetes would store but the job's Service could not have (a leading digit, a dot)
     * is refused at apply, naming the rule; a name with digits and dashes inside is accepted.
     */
    @Test
    void aNameThatCannotNameTheJobsServiceIsRejectedByKubectlApply(KubeCluster kube) {
        for (String name : new String[] {"2024-orders-backfill", "orders.v2"}) {
            Command.Result refused = kube.kubectl(manifest(name, Map.of()), "apply", "-f", "-");
            assertThat(refused.exitCode()).as(name).isNotZero();
            assertThat(refused.stderr()).as(name).contains("metadata.name must start with a lowercase letter");
        }
        kube.kubectl(manifest("orders-2024-backfill", Map.of()), "apply", "-f", "-").orThrow();
    }

    private static String manifest(String name, Map<String, String> edit) {
        return TestManifests.streamJob(name, namespace, edit);
    }
}
