package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.contract.DeadLetterMode;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.TestJobs;

/** The pure builders of a job's worker objects, without a cluster. */
class WorkerResourcesTest {

    private static final WorkerSettings SETTINGS = new WorkerSettings("oncestream/oncestream:0.1.0", "IfNotPresent", 30);

    /**
     * The example of deploy/examples (namespace, uid and generation added as the API server
     * would), with {@code extraSpec} lines appended to its spec.
     */

    @Test
    void workerConfigCarriesTheSpecAndNoCredentials() {
        JobConfig config = WorkerJobConfigs.from(TestJobs.job("  trigger: {interval: 1m30s}\n  parallelism: 3\n"));
        assertThat(config.jobId()).isEqualTo("shop/paid-orders");
        assertThat(config.source().groupId()).isEqualTo("oncestream-shop.paid-orders");
        assertThat(config.trigger().intervalMs()).isEqualTo(90_000);
        assertThat(config.parallelism()).isEqualTo(3);
        assertThat(config.sink().columns()).containsExactly(Map.entry("order_id", "value.id"),
                Map.entry("amount", "value.amount"), Map.entry("customer", "value.customer.name"));
        assertThat(config.deadLetter().mode()).isEqualTo(DeadLetterMode.FAIL);

        ConfigMap cm = WorkerConfigMaps.desired(TestJobs.job(""), WorkerJobConfigs.from(TestJobs.job("")));
        assertThat(cm.getMetadata().getName()).isEqualTo("paid-orders-config");
        assertOwned(cm.getMetadata().getOwnerReferences());
        String json = cm.getData().get("job.json");
        assertThat(JobConfigs.parse(json)).isEqualTo(WorkerJobConfigs.from(TestJobs.job("")));
        assertThat(json).doesNotContain("cassandra-creds").doesNotContain("password");
    }

    @Test
    void invalidExpressionsAndNamesAreReportedWithTheSpecField() {
        StreamJob badColumn = TestJobs.job("");
        badColumn.getSpec().sink.cassandra.columns.put("amount", "value.amount +");
        assertThatThrownBy(() -> WorkerJobConfigs.from(badColumn))
                .isInstanceOf(InvalidConfigException.class)
                .satisfies(e -> assertThat(((InvalidConfigException) e).field()).isEqualTo("spec.sink.cassandra.columns.amount"));
        StreamJob badName = TestJobs.job("");
        badName.getSpec().sink.cassandra.columns.put("bad-name", "value.x");
        assertThatThrownBy(() -> WorkerJobConfigs.from(badName))
                .satisfies(e -> assertThat(((InvalidConfigException) e).field()).isEqualTo("spec.sink.cassandra.columns.bad-name"));
        StreamJob badFilter = TestJobs.job("");
        badFilter.getSpec().filter = "value.amount + 1";
        assertThatThrownBy(() -> WorkerJobConfigs.from(badFilter))
                .hasMessageStartingWith("spec.filter: CEL expression does not compile");
    }

    @Test
    void serviceIsHeadlessAndSelectsTheWorkers() {
        Service s = WorkerServices.desired(TestJobs.job(""));
        assertThat(s.getMetadata().getName()).isEqualTo("paid-orders-workers");
        assertThat(s.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(s.getSpec().getSelector()).containsEntry("app.kubernetes.io/instance", "paid-orders");
        assertThat(s.getSpec().getPorts()).singleElement().satisfies(p -> assertThat(p.getPort()).isEqualTo(8080));
        assertOwned(s.getMetadata().getOwnerReferences());
    }

    @Test
    void kafkaSecretIsMountedReadOnlyAndNeverCopied() {
        String yaml = "  parallelism: 1\n";
        StreamJob job = TestJobs.job(yaml);
        job.getSpec().source.kafka.secretRef = new io.oncestream.api.StreamJobSpec.SecretRef();
        job.getSpec().source.kafka.secretRef.name = "kafka-sasl";
        StatefulSet sts = WorkerStatefulSets.desired(job, SETTINGS, "abc123");
        var pod = sts.getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals("kafka-secret")).singleElement()
                .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("kafka-sasl"));
        Container c = pod.getContainers().get(0);
        assertThat(c.getVolumeMounts()).filteredOn(m -> m.getName().equals("kafka-secret")).singleElement()
                .satisfies(m -> assertThat(m.getReadOnly()).isTrue())
                .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/var/run/secrets/oncestream/kafka"));
        assertThat(c.getEnv()).filteredOn(e -> e.getName().equals("ONCESTREAM_KAFKA_SECRET_DIR")).singleElement()
                .satisfies(e -> assertThat(e.getValue()).isEqualTo("/var/run/secrets/oncestream/kafka"));
        assertThat(WorkerConfigMaps.desired(job, WorkerJobConfigs.from(job)).getData().get("job.json")).doesNotContain("kafka-sasl");

        StatefulSet without = WorkerStatefulSets.desired(TestJobs.job(yaml), SETTINGS, "abc123");
        assertThat(without.getSpec().getTemplate().getSpec().getVolumes()).noneMatch(v -> v.getName().equals("kafka-secret"));
    }

    @Test
    void statefulSetRunsLockedDownWorkersWithCheckpointVolumes() {
        StreamJob job = TestJobs.job("  parallelism: 4\n  checkpoint: {size: 5Gi, storageClassName: fast, whenDeleted: Delete,"
                + " whenScaled: Delete}\n");
        job.getSpec().sink.cassandra.secretRef = new io.oncestream.api.StreamJobSpec.SecretRef();
        job.getSpec().sink.cassandra.secretRef.name = "cassandra-creds";
        StatefulSet sts = WorkerStatefulSets.desired(job, SETTINGS, "abc123");
        assertOwned(sts.getMetadata().getOwnerReferences());
        assertThat(sts.getSpec().getReplicas()).isEqualTo(4);
        assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
        assertThat(sts.getSpec().getServiceName()).isEqualTo("paid-orders-workers");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Delete");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenScaled()).isEqualTo("Delete");
        assertThat(WorkerStatefulSets.desired(TestJobs.job(""), SETTINGS, "abc123").getSpec().getPersistentVolumeClaimRetentionPolicy()
                .getWhenScaled()).as("by default").isEqualTo("Retain");
        var template = sts.getSpec().getTemplate();
        assertThat(template.getMetadata().getAnnotations()).containsEntry("oncestream.io/config-hash", "abc123");
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(sts.getSpec().getSelector().getMatchLabels());
        var pod = template.getSpec();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        Container c = pod.getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("oncestream/oncestream:0.1.0");
        assertThat(c.getArgs()).containsExactly("worker", "--config", "/etc/oncestream/job.json", "--checkpoint", "/checkpoint",
                "--http-port", "8080", "--when-done", "wait");
        assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz/live");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/healthz/ready");
        assertThat(c.getEnv()).extracting(EnvVar::getName).contains("POD_NAME", "CASSANDRA_USERNAME", "CASSANDRA_PASSWORD");
        assertThat(c.getEnv()).filteredOn(e -> e.getName().equals("CASSANDRA_PASSWORD")).singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("cassandra-creds"));
        var claim = sts.getSpec().getVolumeClaimTemplates().get(0);
        assertThat(claim.getMetadata().getName()).isEqualTo("checkpoint");
        assertThat(claim.getSpec().getStorageClassName()).isEqualTo("fast");
        assertThat(claim.getSpec().getResources().getRequests().get("storage").toString()).isEqualTo("5Gi");
        assertThat(claim.getSpec().getAccessModes()).as("the default").containsExactly("ReadWriteOnce");
    }

    @Test
    void checkpointClaimsTakeTheAccessModeOfTheSpec() {
        StatefulSet sts = WorkerStatefulSets.desired(TestJobs.job("  checkpoint: {accessMode: ReadWriteOncePod}\n"), SETTINGS, "h");
        assertThat(sts.getSpec().getVolumeClaimTemplates().get(0).getSpec().getAccessModes()).containsExactly("ReadWriteOncePod");
    }

    @Test
    void suspendScalesToZeroAndAnImageOverrideIsUsed() {
        StatefulSet sts = WorkerStatefulSets.desired(TestJobs.job("  suspend: true\n  worker: {image: my/worker:2}\n"), SETTINGS, "h");
        assertThat(sts.getSpec().getReplicas()).isZero();
        assertThat(sts.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo("my/worker:2");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Retain");
    }

    @Test
    void nodeSelectorAndTolerationsReachThePodTemplate() {
        var pod = WorkerStatefulSets.desired(TestJobs.job("  worker:\n    nodeSelector: {disk: ssd}\n"
                + "    tolerations: [{key: dedicated, operator: Equal, value: streams, effect: NoSchedule}]\n"), SETTINGS, "h")
                .getSpec().getTemplate().getSpec();
        assertThat(pod.getNodeSelector()).containsExactlyEntriesOf(java.util.Map.of("disk", "ssd"));
        assertThat(pod.getTolerations()).singleElement().satisfies(t -> {
            assertThat(t.getKey()).isEqualTo("dedicated");
            assertThat(t.getValue()).isEqualTo("streams");
            assertThat(t.getEffect()).isEqualTo("NoSchedule");
        });
        var plain = WorkerStatefulSets.desired(TestJobs.job(""), SETTINGS, "h").getSpec().getTemplate().getSpec();
        assertThat(plain.getNodeSelector()).isNullOrEmpty();
        assertThat(plain.getTolerations()).isNullOrEmpty();
    }

    /** The worker container's JAVA_TOOL_OPTIONS for the example with {@code extraSpec} lines appended to its spec. */
    private static String javaToolOptions(String extraSpec) {
        return WorkerStatefulSets.desired(TestJobs.job(extraSpec), SETTINGS, "h").getSpec().getTemplate().getSpec().getContainers().get(0)
                .getEnv().stream().filter(e -> e.getName().equals("JAVA_TOOL_OPTIONS")).map(EnvVar::getValue).findFirst().orElseThrow();
    }

    @Test
    void jvmOptionsOfTheJobFollowTheDefaultsSoThatTheyWin() {
        java.util.function.Function<String, String> javaToolOptions = WorkerResourcesTest::javaToolOptions;
        String defaults = "-XX:MaxRAMPercentage=75 -Djava.io.tmpdir=/tmp -XX:Tier4InvocationThreshold=100000"
                + " -XX:Tier4MinInvocationThreshold=12000 -XX:Tier4CompileThreshold=300000 -XX:Tier4BackEdgeThreshold=800000";
        assertThat(javaToolOptions.apply("")).isEqualTo(defaults);
        assertThat(WorkerStatefulSets.desired(TestJobs.job(""), SETTINGS, "h").getSpec().getTemplate().getSpec().getContainers().get(0)
                .getTerminationMessagePolicy()).as("a failed worker's log tail reaches its pod's status").isEqualTo("FallbackToLogsOnError");
        assertThat(javaToolOptions.apply("  worker: {image: my/worker:2}\n")).isEqualTo(defaults);
        assertThat(javaToolOptions.apply("  worker:\n    jvmOptions: \"-XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=50\"\n"))
                .isEqualTo(defaults + " -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=50");
        // An availableNow job's JVM inlines less (a bounded run); its own options still come last.
        String bounded = defaults + " -XX:FreqInlineSize=100 -XX:InlineSmallCode=1000";
        assertThat(javaToolOptions.apply("  trigger: {availableNow: true}\n")).isEqualTo(bounded);
        assertThat(javaToolOptions.apply("  trigger: {availableNow: false}\n")).isEqualTo(defaults);
        assertThat(javaToolOptions.apply("  trigger: {availableNow: true}\n  worker:\n    jvmOptions: \"-XX:FreqInlineSize=325\"\n"))
                .isEqualTo(bounded + " -XX:FreqInlineSize=325");
    }

    @Test
    void aSmallMemoryLimitLeavesTheJvmRoomOutsideItsHeap() {
        java.util.function.Function<String, String> javaToolOptions = WorkerResourcesTest::javaToolOptions;
        String defaults = WorkerStatefulSets.DEFAULT_JVM_OPTIONS;
        java.util.function.Function<String, String> limited = memory -> javaToolOptions.apply(
                "  worker:\n    resources:\n      limits: {memory: " + memory + "}\n");
        assertThat(limited.apply("256Mi")).as("the limit less 160 MiB").isEqualTo(defaults + " -Xmx96m");
        assertThat(limited.apply("512Mi")).isEqualTo(defaults + " -Xmx352m");
        assertThat(limited.apply("384Mi")).isEqualTo(defaults + " -Xmx224m");
        assertThat(limited.apply("0.5Gi")).isEqualTo(defaults + " -Xmx352m");
        assertThat(limited.apply("500M")).as("decimal units").isEqualTo(defaults + " -Xmx316m");
        assertThat(limited.apply("192Mi")).as("at least a quarter of the limit").isEqualTo(defaults + " -Xmx48m");
        assertThat(limited.apply("639Mi")).isEqualTo(defaults + " -Xmx479m");
        assertThat(limited.apply("640Mi")).as("from 640 MiB, 75 % leaves 160 MiB: nothing added").isEqualTo(defaults);
        assertThat(limited.apply("2Gi")).isEqualTo(defaults);
        assertThat(limited.apply("lots")).as("not a quantity: no heap size; the API server refuses the StatefulSet, naming the field")
                .isEqualTo(defaults);
        assertThat(javaToolOptions.apply("  worker:\n    resources:\n      requests: {memory: 256Mi}\n"))
                .as("a request without a limit: the JVM sees no limit").isEqualTo(defaults);
        for (String own : new String[] {"-Xmx200m", "-XX:MaxRAMPercentage=50", "-XX:MaxHeapSize=200m", "-XX:MaxRAM=1g",
                "-XX:MaxRAMFraction=2", "-Xms128m", "-XX:InitialHeapSize=128m", "-XX:MinHeapSize=64m", "-XX:InitialRAMPercentage=50",
                "-XX:MinRAMPercentage=50", "-Xss512k -Xms128m"}) {
            assertThat(javaToolOptions.apply("  worker:\n    resources:\n      limits: {memory: 256Mi}\n    jvmOptions: \"" + own + "\"\n"))
                    .as("the job's own heap size").isEqualTo(defaults + " " + own);
        }
        assertThat(javaToolOptions.apply("  worker:\n    resources:\n      limits: {memory: 256Mi}\n    jvmOptions: \"-XX:TieredStopAtLevel=1\"\n"))
                .isEqualTo(defaults + " -Xmx96m -XX:TieredStopAtLevel=1");
        assertThat(javaToolOptions.apply("  worker:\n    resources:\n      limits: {memory: 256Mi}\n    jvmOptions: \"-Dnote=-Xmx\"\n"))
                .as("a property whose value names a heap option").isEqualTo(defaults + " -Xmx96m -Dnote=-Xmx");
        assertThat(javaToolOptions.apply("  trigger: {availableNow: true}\n  worker:\n    resources:\n      limits: {memory: 256Mi}\n"))
                .isEqualTo(WorkerStatefulSets.AVAILABLE_NOW_JVM_OPTIONS + " -Xmx96m");
    }

    @Test
    void aDrainedJobKeepsItsTemplateButRunsNoWorkers() {
        StreamJob job = TestJobs.job("  parallelism: 3\n");
        StatefulSet running = WorkerStatefulSets.desired(job, SETTINGS, "h", false);
        StatefulSet drained = WorkerStatefulSets.desired(job, SETTINGS, "h", true);
        assertThat(running.getSpec().getReplicas()).isEqualTo(3);
        assertThat(drained.getSpec().getReplicas()).isZero();
        assertThat(drained.getSpec().getTemplate()).isEqualTo(running.getSpec().getTemplate());
        assertThat(drained.getSpec().getVolumeClaimTemplates()).isEqualTo(running.getSpec().getVolumeClaimTemplates());
    }

    @Test
    void configHashFollowsTheConfiguration() {
        String a = WorkerConfigMaps.hash(WorkerJobConfigs.from(TestJobs.job("")));
        String b = WorkerConfigMaps.hash(WorkerJobConfigs.from(TestJobs.job("")));
        StreamJob changed = TestJobs.job("");
        changed.getSpec().filter = "true";
        String c = WorkerConfigMaps.hash(WorkerJobConfigs.from(changed));
        assertThat(a).isEqualTo(b).isNotEqualTo(c).hasSize(16);
    }

    private static void assertOwned(java.util.List<OwnerReference> refs) {
        assertThat(refs).singleElement().satisfies(r -> {
            assertThat(r.getKind()).isEqualTo("StreamJob");
            assertThat(r.getApiVersion()).isEqualTo("oncestream.io/v1alpha1");
            assertThat(r.getUid()).isEqualTo("1234-abcd");
            assertThat(r.getController()).isTrue();
        });
    }
}
