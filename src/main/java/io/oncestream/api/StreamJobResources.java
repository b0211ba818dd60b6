package io.oncestream.api;

import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.WorkerEndpoints;

/**
 * Names and labels of the objects the operator makes for a StreamJob. They are API: users,
 * dashboards and the e2e harness rely on them, so they are defined here and nowhere else.
 */
public final class StreamJobResources {

    /**
     * The longest StreamJob name whose objects all have valid names and labels: the
     * StatefulSet {@code <job>} labels its pods {@code controller-revision-hash: <job>-<hash>},
     * the hash up to 10 characters and a label value at most 63 (the other names are shorter:
     * {@code <job>-workers}, {@code <job>-255}). The CRD refuses longer names at apply.
     */
    public static final int MAX_NAME_LENGTH = 52;
    /**
     * What a job's name must match (a DNS-1035 label): its Service {@code <name>-workers} is one.
     * Kubernetes itself accepts custom objects with any DNS subdomain name (a leading digit, dots).
     */
    public static final String NAME_PATTERN = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

    /** Port of the worker's HTTP endpoints. */
    public static final int WORKER_HTTP_PORT = WorkerEndpoints.PORT;
    /** Key of the worker configuration in the job's ConfigMap. */
    public static final String CONFIG_KEY = "job.json";
    /** Pod annotation carrying the hash of the worker configuration; a change rolls the workers. */
    public static final String CONFIG_HASH_ANNOTATION = "oncestream.io/config-hash";
    /**
     * On the ConfigMap, Service and StatefulSet: a digest of what the operator last applied. An
     * object is applied again when its digest differs from the desired one's (see docs/operator.md).
     */
    public static final String APPLIED_HASH_ANNOTATION = "oncestream.io/applied-hash";
    /** Label with the job's name on every object made for it. */
    public static final String JOB_LABEL = "oncestream.io/job";
    /** The {@code app.kubernetes.io/managed-by} value of every object made for a job. */
    public static final String MANAGED_BY = "oncestream-operator";
    /**
     * Label selector of every object the operator makes; its informers cache only these. A
     * constant expression, so that informer annotations can name it.
     */
    public static final String MANAGED_SELECTOR = "app.kubernetes.io/managed-by=" + MANAGED_BY;

    private StreamJobResources() {
    }

    /**
     * The job's identity for its workers: {@code <namespace>/<name>}. Stored in each checkpoint
     * and reported on {@code /progress}; the operator checks it against the pod it polled.
     */
    public static String jobId(String namespace, String job) {
        return namespace + "/" + job;
    }

    /** {@link #jobId(String, String)} of {@code job}. */
    public static String jobId(StreamJob job) {
        return jobId(job.getMetadata().getNamespace(), job.getMetadata().getName());
    }

    /** The StatefulSet, whose pods are {@code <job>-0 .. <job>-(parallelism-1)}. */
    public static String statefulSetName(String job) {
        return job;
    }

    /** The worker pod of ordinal {@code ordinal}, which runs worker index {@code ordinal}. */
    public static String podName(String job, int ordinal) {
        return statefulSetName(job) + "-" + ordinal;
    }

    /** The headless Service that gives each worker pod a stable DNS name. */
    public static String serviceName(String job) {
        return job + "-workers";
    }

    /** The ConfigMap with the worker configuration. */
    public static String configMapName(String job) {
        return job + "-config";
    }

    /** The volume claim template's name; PVCs are {@code checkpoint-<job>-<ordinal>}. */
    public static String checkpointVolumeName() {
        return "checkpoint";
    }

    /** The PVC of a worker pod, as the StatefulSet controller names it from the claim template: {@code checkpoint-<pod>}. */
    public static String checkpointClaimName(String podName) {
        return checkpointVolumeName() + "-" + podName;
    }

    /** Labels that select a job's worker pods. */
    public static Map<String, String> selectorLabels(String job) {
        Map<String, String> labels = new TreeMap<>();
        labels.put("app.kubernetes.io/name", "oncestream-worker");
        labels.put("app.kubernetes.io/instance", job);
        return labels;
    }

    /** Labels of every object made for a job. */
    public static Map<String, String> labels(String job) {
        Map<String, String> labels = selectorLabels(job);
        labels.put("app.kubernetes.io/managed-by", MANAGED_BY);
        labels.put("app.kubernetes.io/part-of", "oncestream");
        labels.put(JOB_LABEL, job);
        return labels;
    }
}
