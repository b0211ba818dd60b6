package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobSpec;
import io.oncestream.api.VolumeAccessMode;
import io.oncestream.api.VolumeRetention;
import io.oncestream.contract.JobDefaults;
import io.oncestream.contract.WorkerEndpoints;

/**
 * The StatefulSet of a job's workers: one pod per worker ({@code parallelism}, or none while
 * suspended), started together, each with its own checkpoint volume; non-root, read-only
 * root filesystem, no service-account token, credentials only from Secrets (Cassandra's as
 * environment variables, Kafka's as a read-only directory of client properties).
 */
public final class WorkerStatefulSets {

    static final String CONFIG_DIR = "/etc/oncestream";
    static final String CHECKPOINT_DIR = "/checkpoint";
    static final String KAFKA_SECRET_DIR = "/var/run/secrets/oncestream/kafka";
    /**
     * The C2 compiler's thresholds raised twentyfold for the worker: a method is compiled at full
     * optimization only after 100,000 calls (or loop iterations to match) instead of 5,000, so the
     * code run per record or per row is still compiled within its first 100,000 records, while the
     * code run a few thousand times at start (configuration, CEL environment, class loading) is
     * not. Measured side by side ({@code deploy/local/benchmark.sh --worker-process}, README): 0.84×
     * the worker's CPU over a million records and 0.94× over three million, at 1.13× and 1.14× the
     * rows/s; the main thread's own CPU per record unchanged.
     */
    static final String JIT_OPTIONS =
            "-XX:Tier4InvocationThreshold=100000 -XX:Tier4MinInvocationThreshold=12000 -XX:Tier4CompileThreshold=300000"
                    + " -XX:Tier4BackEdgeThreshold=800000";
    /**
     * For {@code availableNow} jobs, C2 inlines less: methods of at most 100 bytecodes instead of
     * 325 for hot call sites, and no method already compiled to more than 1,000 bytes instead of
     * 2,500. A few compilations that inline whole call trees (the engine's read loop, the driver's
     * request path, Netty's pipeline; 100-400 ms each, measured with JFR) were most of the JIT's
     * CPU in a run of a million records. Measured side by side ({@code deploy/local/benchmark.sh
     * --worker-process}, README): 0.85-0.91x the worker's CPU over a million records and 0.96x
     * over three million, but the code it compiles runs up to 7 % slower, so the saving ends at
     * around six million records: a continuous job keeps the JVM's own limits.
     */
    static final String BOUNDED_RUN_JIT_OPTIONS = "-XX:FreqInlineSize=100 -XX:InlineSmallCode=1000";
    /**
     * The worker JVM's options before the job's {@code worker.jvmOptions} (a later option wins): the
     * image's (the heap follows the container's memory limit, temporary files go to the writable
     * emptyDir; the pod's variable replaces the image's, so they are spelled out), then {@link #JIT_OPTIONS}.
     */
    public static final String DEFAULT_JVM_OPTIONS = "-XX:MaxRAMPercentage=75 -Djava.io.tmpdir=/tmp " + JIT_OPTIONS;
    /** {@link #DEFAULT_JVM_OPTIONS} for an {@code availableNow} job: with {@link #BOUNDED_RUN_JIT_OPTIONS}. */
    public static final String AVAILABLE_NOW_JVM_OPTIONS = DEFAULT_JVM_OPTIONS + " " + BOUNDED_RUN_JIT_OPTIONS;

    private WorkerStatefulSets() {
    }

    public static StatefulSet desired(StreamJob job, WorkerSettings settings, String configHash) {
        return desired(job, settings, configHash, false);
    }

    /**
     * @param drained true once every worker of an {@code availableNow} job reported COMPLETED for
     *                the current spec: its workers are stopped (checkpoints kept) instead of being
     *                restarted to find nothing left to do
     */
    public static StatefulSet desired(StreamJob job, WorkerSettings settings, String configHash, boolean drained) {
        return desired(job, settings, configHash, drained, -1);
    }

    /**
     * @param workers the number of workers of the configuration applied with it (during a rescale,
     *                the savepoint's), or -1 for {@code spec.parallelism}
     */
    public static StatefulSet desired(StreamJob job, WorkerSettings settings, String configHash, boolean drained, int workers) {
        StreamJobSpec spec = job.getSpec();
        String name = job.getMetadata().getName();
        boolean suspended = Boolean.TRUE.equals(spec.suspend);
        int replicas = suspended || drained ? 0 : workers >= 0 ? workers
                : spec.parallelism == null ? JobDefaults.PARALLELISM : spec.parallelism;
        StreamJobSpec.Checkpoint checkpoint = spec.checkpoint == null ? new StreamJobSpec.Checkpoint() : spec.checkpoint;
        String image = spec.worker != null && spec.worker.image != null ? spec.worker.image : settings.defaultImage();
        ResourceRequirements resources = spec.worker != null ? spec.worker.resources : null;
        String retention = checkpoint.whenDeleted == VolumeRetention.DELETE ? "Delete" : "Retain";
        StreamJobSpec.SecretRef kafkaSecret = spec.source.kafka.secretRef;

        return new StatefulSetBuilder()
                .withMetadata(OwnedObjects.metadata(job, StreamJobResources.statefulSetName(name)))
                .withNewSpec()
                .withReplicas(replicas)
                .withServiceName(StreamJobResources.serviceName(name))
                .withPodManagementPolicy("Parallel")
                .withNewSelector().withMatchLabels(StreamJobResources.selectorLabels(name)).endSelector()
                .withNewPersistentVolumeClaimRetentionPolicy().withWhenDeleted(retention)
                .withWhenScaled(checkpoint.whenScaled == VolumeRetention.DELETE ? "Delete" : "Retain")
                .endPersistentVolumeClaimRetentionPolicy()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(StreamJobResources.labels(name))
                .addToAnnotations(StreamJobResources.CONFIG_HASH_ANNOTATION, configHash)
                // The convention a Prometheus with Kubernetes pod discovery scrapes by (docs/metrics.md).
                .addToAnnotations("prometheus.io/scrape", "true")
                .addToAnnotations("prometheus.io/port", String.valueOf(StreamJobResources.WORKER_HTTP_PORT))
                .addToAnnotations("prometheus.io/path", WorkerEndpoints.METRICS)
                .endMetadata()
                .withNewSpec()
                .withNodeSelector(spec.worker == null ? null : spec.worker.nodeSelector)
                .withTolerations(spec.worker == null ? null : spec.worker.tolerations)
                .withAutomountServiceAccountToken(false)
                .withTerminationGracePeriodSeconds(settings.terminationGraceSeconds())
                .withNewSecurityContext()
                .withRunAsNonRoot(true).withRunAsUser(10001L).withRunAsGroup(10001L).withFsGroup(10001L)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .endSecurityContext()
                .addNewContainer()
                .withName("worker")
                .withImage(image)
                .withImagePullPolicy(settings.imagePullPolicy())
                .withArgs("worker", "--config", CONFIG_DIR + "/" + StreamJobResources.CONFIG_KEY,
                        "--checkpoint", CHECKPOINT_DIR, "--http-port", String.valueOf(StreamJobResources.WORKER_HTTP_PORT),
                        // A drained availableNow worker stays up until the operator scales the job down:
                        // an exit would make the kubelet restart it, over and over.
                        "--when-done", "wait")
                .withEnv(env(spec, job.getMetadata().getUid()))
                // A worker that fails leaves the end of its log in the pod's status, where the operator reads it.
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .addNewPort().withName("http").withContainerPort(StreamJobResources.WORKER_HTTP_PORT).endPort()
                .withLivenessProbe(probe(WorkerEndpoints.LIVE, 3))
                .withReadinessProbe(probe(WorkerEndpoints.READY, 1))
                .withResources(resources)
                .withNewSecurityContext()
                .withReadOnlyRootFilesystem(true).withAllowPrivilegeEscalation(false)
                .withNewCapabilities().withDrop("ALL").endCapabilities()
                .endSecurityContext()
                .addNewVolumeMount().withName("config").withMountPath(CONFIG_DIR).withReadOnly(true).endVolumeMount()
                .addNewVolumeMount().withName(StreamJobResources.checkpointVolumeName()).withMountPath(CHECKPOINT_DIR)
                .endVolumeMount()
                .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                .addAllToVolumeMounts(kafkaSecret == null ? List.of() : List.of(new VolumeMountBuilder()
                        .withName("kafka-secret").withMountPath(KAFKA_SECRET_DIR).withReadOnly(true).build()))
                .endContainer()
                .addNewVolume().withName("config").withNewConfigMap()
                .withName(StreamJobResources.configMapName(name)).endConfigMap().endVolume()
                .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
                .addAllToVolumes(kafkaSecret == null ? List.of() : List.of(new VolumeBuilder().withName("kafka-secret")
                        .withNewSecret().withSecretName(kafkaSecret.name).withDefaultMode(0440).endSecret().build()))
                .endSpec()
                .endTemplate()
                .addToVolumeClaimTemplates(new PersistentVolumeClaimBuilder()
                        .withNewMetadata().withName(StreamJobResources.checkpointVolumeName())
                        .withLabels(StreamJobResources.labels(name)).endMetadata()
                        .withNewSpec()
                        .withAccessModes((checkpoint.accessMode == null ? VolumeAccessMode.READ_WRITE_ONCE
                                : checkpoint.accessMode).kubernetesName())
                        .withStorageClassName(checkpoint.storageClassName)
                        .withNewResources()
                        .addToRequests("storage", new Quantity(checkpoint.size == null ? StreamJobSpec.Checkpoint.DEFAULT_SIZE : checkpoint.size))
                        .endResources()
                        .endSpec()
                        .build())
                .endSpec()
                .build();
    }

    /**
     * POD_NAME gives the worker its index; ONCESTREAM_JOB_UID the job's identity, which its consumer-group
     * commits carry (a lost checkpoint is recovered only from this job's, never from an earlier job of the
     * same name); JAVA_TOOL_OPTIONS the JVM options, the job's after the defaults;
     * Cassandra credentials come from the job's Secret, never from the ConfigMap.
     * Values the API server would default are spelled out (fieldRef apiVersion), so that the applied
     * object equals the desired one and an unchanged job is never re-applied.
     */
    private static List<EnvVar> env(StreamJobSpec spec, String jobUid) {
        List<EnvVar> env = new ArrayList<>();
        env.add(new EnvVarBuilder().withName("POD_NAME").withNewValueFrom().withNewFieldRef().withApiVersion("v1").withFieldPath("metadata.name")
                .endFieldRef().endValueFrom().build());
        if (jobUid != null) {
            env.add(new EnvVarBuilder().withName("ONCESTREAM_JOB_UID").withValue(jobUid).build());
        }
        String jvmOptions = spec.worker == null ? null : spec.worker.jvmOptions; // the CRD's pattern: options, no edge spaces
        String defaults = availableNow(spec) ? AVAILABLE_NOW_JVM_OPTIONS : DEFAULT_JVM_OPTIONS;
        env.add(new EnvVarBuilder().withName("JAVA_TOOL_OPTIONS")
                .withValue(jvmOptions == null ? defaults : defaults + " " + jvmOptions).build());
        if (spec.source.kafka.secretRef != null) {
            env.add(new EnvVarBuilder().withName("ONCESTREAM_KAFKA_SECRET_DIR").withValue(KAFKA_SECRET_DIR).build());
        }
        StreamJobSpec.SecretRef secret = spec.sink.cassandra.secretRef;
        if (secret != null) {
            for (String[] pair : new String[][] {{"CASSANDRA_USERNAME", "username"}, {"CASSANDRA_PASSWORD", "password"}}) {
                env.add(new EnvVarBuilder().withName(pair[0]).withNewValueFrom().withNewSecretKeyRef()
                        .withName(secret.name).withKey(pair[1]).endSecretKeyRef().endValueFrom().build());
            }
        }
        return env;
    }

    private static Probe probe(String path, int failureThreshold) {
        return new ProbeBuilder()
                .withNewHttpGet().withPath(path).withNewPort("http").endHttpGet()
                .withPeriodSeconds(5).withTimeoutSeconds(2).withFailureThreshold(failureThreshold)
                .build();
    }

    /** Whether the job drains what its topics hold and completes: its {@code trigger.availableNow}, or the default. */
    private static boolean availableNow(StreamJobSpec spec) {
        return spec.trigger != null && spec.trigger.availableNow != null ? spec.trigger.availableNow : JobDefaults.AVAILABLE_NOW;
    }
}
