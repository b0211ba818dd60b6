package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.ConfigMapVolumeSource;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EmptyDirVolumeSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectFieldSelector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpec;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeResourceRequirements;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetPersistentVolumeClaimRetentionPolicy;
import io.fabric8.kubernetes.api.model.apps.StatefulSetSpec;

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

    /** What the JVM needs outside its heap: metaspace, code, threads, direct buffers (docs/worker.md, Memory). */
    static final long NON_HEAP_BYTES = 160L << 20;
    /**
     * JVM options that size the heap themselves, its maximum or its start (a start above the
     * added maximum would stop the JVM): with one of them the job decides.
     */
    private static final List<String> HEAP_SIZE_OPTIONS = List.of("-Xmx", "-Xms", "-XX:MaxHeapSize=", "-XX:InitialHeapSize=",
            "-XX:MinHeapSize=", "-XX:MaxRAM=", "-XX:MaxRAMPercentage=", "-XX:MaxRAMFraction=", "-XX:InitialRAMPercentage=",
            "-XX:InitialRAMFraction=", "-XX:MinRAMPercentage=", "-XX:MinRAMFraction=");

    private WorkerStatefulSets() {
    }

    /**
     * The worker container's {@code JAVA_TOOL_OPTIONS}: {@code defaults}, the heap's size for a
     * small memory limit ({@link #heapOption}), then the job's {@code jvmOptions} (a later option wins).
     *
     * @param memoryLimitBytes the container's memory limit, or -1 for none
     */
    public static String javaToolOptions(String defaults, long memoryLimitBytes, String jvmOptions) {
        String heap = heapOption(memoryLimitBytes, jvmOptions);
        String options = heap == null ? defaults : defaults + " " + heap;
        return jvmOptions == null ? options : options + " " + jvmOptions;
    }

    /**
     * {@code -Xmx}, in MiB, for a memory limit under 640 MiB, unless the job's options size the
     * heap: the limit less {@link #NON_HEAP_BYTES}, at least a quarter of it. The defaults' 75 %
     * of the limit leaves the JVM less than the 130-170 MiB it takes outside the heap there, and
     * a worker that fills its heap (any load whose batches outlive a young collection: the serial
     * collector grows the heap to its maximum first) was killed: at 5,000 records/s in 384 MiB,
     * catching up in 256 MiB (docs/benchmarks.md, "Worker memory"). From 640 MiB up, 75 % leaves
     * at least that, and nothing is added.
     */
    static String heapOption(long memoryLimitBytes, String jvmOptions) {
        if (memoryLimitBytes <= 0 || jvmOptions != null && Arrays.stream(jvmOptions.split(" +"))
                .anyMatch(option -> HEAP_SIZE_OPTIONS.stream().anyMatch(option::startsWith))) {
            return null;
        }
        long heap = Math.max(memoryLimitBytes / 4, memoryLimitBytes - NON_HEAP_BYTES);
        if (heap >= memoryLimitBytes / 4 * 3) {
            return null;
        }
        return "-Xmx" + Math.max(1, heap >> 20) + "m";
    }

    /**
     * The worker container's memory limit in bytes, or -1 if it has none, or one that is not a
     * quantity: the CRD takes any string there, and the API server refuses the StatefulSet with
     * the field named, which the job's status reports as for any refused StatefulSet.
     */
    static long memoryLimitBytes(StreamJobSpec spec) {
        ResourceRequirements resources = spec.worker == null ? null : spec.worker.resources;
        Quantity limit = resources == null || resources.getLimits() == null ? null : resources.getLimits().get("memory");
        if (limit == null) {
            return -1;
        }
        try {
            return Quantity.getAmountInBytes(limit).longValue();
        } catch (IllegalArgumentException | ArithmeticException e) {
            return -1;
        }
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
     * Made with the model's setters rather than fabric8's builders: a builder copies every nested
     * object again at each level it is ended at, which made this 25 times slower (51 against 2 µs
     * warm) and was a fifth of the reconcile threads' CPU at a cold start. The job's own objects
     * (resources, node selector, tolerations) are therefore shared, not copied: the reconcile's
     * job is the SDK's copy, and nothing changes a desired object but its digest
     * ({@link io.oncestream.operator.cache.AppliedObjects#stamped}, which replaces the annotations).
     * src/test/resources/formats/worker-statefulset-*.yaml hold what it renders.
     *
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

        StatefulSetSpec set = new StatefulSetSpec();
        set.setReplicas(replicas);
        set.setServiceName(StreamJobResources.serviceName(name));
        set.setPodManagementPolicy("Parallel");
        LabelSelector selector = new LabelSelector();
        selector.setMatchLabels(StreamJobResources.selectorLabels(name));
        set.setSelector(selector);
        StatefulSetPersistentVolumeClaimRetentionPolicy claims = new StatefulSetPersistentVolumeClaimRetentionPolicy();
        claims.setWhenDeleted(retention);
        claims.setWhenScaled(checkpoint.whenScaled == VolumeRetention.DELETE ? "Delete" : "Retain");
        set.setPersistentVolumeClaimRetentionPolicy(claims);
        set.setTemplate(podTemplate(job, settings, configHash, container(job, settings, image, resources, kafkaSecret), kafkaSecret));
        set.setVolumeClaimTemplates(new ArrayList<>(List.of(checkpointClaim(name, checkpoint))));

        StatefulSet statefulSet = new StatefulSet();
        statefulSet.setMetadata(OwnedObjects.metadata(job, StreamJobResources.statefulSetName(name)));
        statefulSet.setSpec(set);
        return statefulSet;
    }

    /** The worker container: its arguments, variables, port, probes, resources, security context and mounts. */
    private static Container container(StreamJob job, WorkerSettings settings, String image, ResourceRequirements resources,
            StreamJobSpec.SecretRef kafkaSecret) {
        Container worker = new Container();
        worker.setName("worker");
        worker.setImage(image);
        worker.setImagePullPolicy(settings.imagePullPolicy());
        worker.setArgs(new ArrayList<>(List.of("worker", "--config", CONFIG_DIR + "/" + StreamJobResources.CONFIG_KEY,
                "--checkpoint", CHECKPOINT_DIR, "--http-port", String.valueOf(StreamJobResources.WORKER_HTTP_PORT),
                // A drained availableNow worker stays up until the operator scales the job down:
                // an exit would make the kubelet restart it, over and over.
                "--when-done", "wait")));
        worker.setEnv(env(job.getSpec(), job.getMetadata().getUid()));
        // A worker that fails leaves the end of its log in the pod's status, where the operator reads it.
        worker.setTerminationMessagePolicy("FallbackToLogsOnError");
        ContainerPort http = new ContainerPort();
        http.setName("http");
        http.setContainerPort(StreamJobResources.WORKER_HTTP_PORT);
        worker.setPorts(new ArrayList<>(List.of(http)));
        worker.setLivenessProbe(probe(WorkerEndpoints.LIVE, 3));
        worker.setReadinessProbe(probe(WorkerEndpoints.READY, 1));
        worker.setResources(resources);
        SecurityContext security = new SecurityContext();
        security.setReadOnlyRootFilesystem(true);
        security.setAllowPrivilegeEscalation(false);
        Capabilities capabilities = new Capabilities();
        capabilities.setDrop(new ArrayList<>(List.of("ALL")));
        security.setCapabilities(capabilities);
        worker.setSecurityContext(security);
        List<VolumeMount> mounts = new ArrayList<>();
        mounts.add(mount("config", CONFIG_DIR, true));
        mounts.add(mount(StreamJobResources.checkpointVolumeName(), CHECKPOINT_DIR, null));
        mounts.add(mount("tmp", "/tmp", null));
        if (kafkaSecret != null) {
            mounts.add(mount("kafka-secret", KAFKA_SECRET_DIR, true));
        }
        worker.setVolumeMounts(mounts);
        return worker;
    }

    /** The pod: its labels and annotations, placement, security context, the container and its volumes. */
    private static PodTemplateSpec podTemplate(StreamJob job, WorkerSettings settings, String configHash, Container worker,
            StreamJobSpec.SecretRef kafkaSecret) {
        StreamJobSpec spec = job.getSpec();
        String name = job.getMetadata().getName();
        PodSecurityContext security = new PodSecurityContext();
        security.setRunAsNonRoot(true);
        security.setRunAsUser(10001L);
        security.setRunAsGroup(10001L);
        security.setFsGroup(10001L);
        SeccompProfile seccomp = new SeccompProfile();
        seccomp.setType("RuntimeDefault");
        security.setSeccompProfile(seccomp);

        List<Volume> volumes = new ArrayList<>();
        Volume config = new Volume();
        config.setName("config");
        ConfigMapVolumeSource configMap = new ConfigMapVolumeSource();
        configMap.setName(StreamJobResources.configMapName(name));
        config.setConfigMap(configMap);
        volumes.add(config);
        Volume tmp = new Volume();
        tmp.setName("tmp");
        tmp.setEmptyDir(new EmptyDirVolumeSource());
        volumes.add(tmp);
        if (kafkaSecret != null) {
            Volume secret = new Volume();
            secret.setName("kafka-secret");
            SecretVolumeSource source = new SecretVolumeSource();
            source.setSecretName(kafkaSecret.name);
            source.setDefaultMode(0440);
            secret.setSecret(source);
            volumes.add(secret);
        }

        PodSpec pod = new PodSpec();
        pod.setNodeSelector(spec.worker == null ? null : spec.worker.nodeSelector);
        pod.setTolerations(spec.worker == null ? null : spec.worker.tolerations);
        pod.setAutomountServiceAccountToken(false);
        pod.setTerminationGracePeriodSeconds(settings.terminationGraceSeconds());
        pod.setSecurityContext(security);
        pod.setContainers(new ArrayList<>(List.of(worker)));
        pod.setVolumes(volumes);

        ObjectMeta metadata = new ObjectMeta();
        metadata.setLabels(StreamJobResources.labels(name));
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(StreamJobResources.CONFIG_HASH_ANNOTATION, configHash);
        // The convention a Prometheus with Kubernetes pod discovery scrapes by (docs/metrics.md).
        annotations.put("prometheus.io/scrape", "true");
        annotations.put("prometheus.io/port", String.valueOf(StreamJobResources.WORKER_HTTP_PORT));
        annotations.put("prometheus.io/path", WorkerEndpoints.METRICS);
        metadata.setAnnotations(annotations);
        PodTemplateSpec template = new PodTemplateSpec();
        template.setMetadata(metadata);
        template.setSpec(pod);
        return template;
    }

    /** The claim template of each worker's checkpoint volume. */
    private static PersistentVolumeClaim checkpointClaim(String name, StreamJobSpec.Checkpoint checkpoint) {
        ObjectMeta metadata = new ObjectMeta();
        metadata.setName(StreamJobResources.checkpointVolumeName());
        metadata.setLabels(StreamJobResources.labels(name));
        PersistentVolumeClaimSpec spec = new PersistentVolumeClaimSpec();
        spec.setAccessModes(new ArrayList<>(List.of((checkpoint.accessMode == null ? VolumeAccessMode.READ_WRITE_ONCE
                : checkpoint.accessMode).kubernetesName())));
        spec.setStorageClassName(checkpoint.storageClassName);
        VolumeResourceRequirements resources = new VolumeResourceRequirements();
        Map<String, Quantity> requests = new LinkedHashMap<>();
        requests.put("storage", new Quantity(checkpoint.size == null ? StreamJobSpec.Checkpoint.DEFAULT_SIZE : checkpoint.size));
        resources.setRequests(requests);
        spec.setResources(resources);
        PersistentVolumeClaim claim = new PersistentVolumeClaim();
        claim.setMetadata(metadata);
        claim.setSpec(spec);
        return claim;
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
        ObjectFieldSelector podName = new ObjectFieldSelector();
        podName.setApiVersion("v1");
        podName.setFieldPath("metadata.name");
        EnvVarSource fromPodName = new EnvVarSource();
        fromPodName.setFieldRef(podName);
        env.add(variable("POD_NAME", null, fromPodName));
        if (jobUid != null) {
            env.add(variable("ONCESTREAM_JOB_UID", jobUid, null));
        }
        String jvmOptions = spec.worker == null ? null : spec.worker.jvmOptions; // the CRD's pattern: options, no edge spaces
        String defaults = availableNow(spec) ? AVAILABLE_NOW_JVM_OPTIONS : DEFAULT_JVM_OPTIONS;
        env.add(variable("JAVA_TOOL_OPTIONS", javaToolOptions(defaults, memoryLimitBytes(spec), jvmOptions), null));
        if (spec.source.kafka.secretRef != null) {
            env.add(variable("ONCESTREAM_KAFKA_SECRET_DIR", KAFKA_SECRET_DIR, null));
        }
        StreamJobSpec.SecretRef secret = spec.sink.cassandra.secretRef;
        if (secret != null) {
            for (String[] pair : new String[][] {{"CASSANDRA_USERNAME", "username"}, {"CASSANDRA_PASSWORD", "password"}}) {
                SecretKeySelector key = new SecretKeySelector();
                key.setName(secret.name);
                key.setKey(pair[1]);
                EnvVarSource fromSecret = new EnvVarSource();
                fromSecret.setSecretKeyRef(key);
                env.add(variable(pair[0], null, fromSecret));
            }
        }
        return env;
    }

    private static VolumeMount mount(String name, String path, Boolean readOnly) {
        VolumeMount mount = new VolumeMount();
        mount.setName(name);
        mount.setMountPath(path);
        mount.setReadOnly(readOnly);
        return mount;
    }

    private static EnvVar variable(String name, String value, EnvVarSource from) {
        EnvVar variable = new EnvVar();
        variable.setName(name);
        variable.setValue(value);
        variable.setValueFrom(from);
        return variable;
    }

    private static Probe probe(String path, int failureThreshold) {
        HTTPGetAction get = new HTTPGetAction();
        get.setPath(path);
        get.setPort(new IntOrString("http"));
        Probe probe = new Probe();
        probe.setHttpGet(get);
        probe.setPeriodSeconds(5);
        probe.setTimeoutSeconds(2);
        probe.setFailureThreshold(failureThreshold);
        return probe;
    }

    /** Whether the job drains what its topics hold and completes: its {@code trigger.availableNow}, or the default. */
    private static boolean availableNow(StreamJobSpec spec) {
        return spec.trigger != null && spec.trigger.availableNow != null ? spec.trigger.availableNow : JobDefaults.AVAILABLE_NOW;
    }
}
