package io.oncestream.operator.cache;

import java.util.HashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetSpec;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/**
 * What the operator's informers keep of each object: only what the reconciler reads. The API
 * server sends whole objects, and most of an object is of no use here (managed-field trees,
 * the last-applied annotation, pod specs, StatefulSet templates); kept for every job, they
 * were most of the operator's heap. Each form is made once as the object enters the cache.
 * <p>
 * Kept: for a StreamJob everything but managed fields and the last-applied annotation; for a
 * pod its name, labels, deletion time, phase, IP, {@code Ready} condition and why a container
 * waits (with its last exit) if it does; for a PVC its
 * name and labels; for the owned objects their metadata (with {@link AppliedObjects}' digest)
 * plus ConfigMap data and StatefulSet replicas.
 */
public final class CachedObjects {

    /**
     * Objects per page of an informer's first list: with thousands of jobs, one unpaged list of
     * pods would be held whole, as the server sent it, before any of it is cut down.
     */
    public static final long LIST_PAGE = 500;

    static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

    private CachedObjects() {
    }

    /** The StreamJob as reconciled: all of it but managed fields and the last-applied annotation (changed in place). */
    static StreamJob streamJob(StreamJob job) {
        job.getMetadata().setManagedFields(null);
        job.getMetadata().setAnnotations(withoutLastApplied(job.getMetadata().getAnnotations()));
        return job;
    }

    /** A worker pod: what decides whether and where its {@code /progress} is read. */
    static Pod pod(Pod pod) {
        Pod kept = new Pod();
        ObjectMeta meta = new ObjectMeta();
        meta.setName(pod.getMetadata().getName());
        meta.setNamespace(pod.getMetadata().getNamespace());
        meta.setUid(pod.getMetadata().getUid());
        meta.setResourceVersion(pod.getMetadata().getResourceVersion());
        meta.setLabels(pod.getMetadata().getLabels());
        meta.setDeletionTimestamp(pod.getMetadata().getDeletionTimestamp());
        kept.setMetadata(meta);
        PodStatus status = pod.getStatus();
        if (status != null) {
            PodStatus keptStatus = new PodStatus();
            keptStatus.setPhase(status.getPhase());
            keptStatus.setPodIP(status.getPodIP());
            if (status.getConditions() != null) {
                keptStatus.setConditions(status.getConditions().stream().filter(c -> "Ready".equals(c.getType())).toList());
            }
            if (status.getContainerStatuses() != null) {
                keptStatus.setContainerStatuses(status.getContainerStatuses().stream().map(CachedObjects::containerStatus).toList());
            }
            kept.setStatus(keptStatus);
        }
        return kept;
    }

    /**
     * Of a worker container's status, what says why it does not run: its name, the reason it
     * waits (and that reason's message), and its last exit (code, reason, message: the tail of its
     * log when it failed, at most {@link #TERMINATION_MESSAGE} characters kept).
     */
    static ContainerStatus containerStatus(ContainerStatus container) {
        ContainerStatus kept = new ContainerStatus();
        kept.setName(container.getName());
        kept.setRestartCount(container.getRestartCount()); // for oncestream_job_worker_restarts
        ContainerStateWaiting waiting = container.getState() == null ? null : container.getState().getWaiting();
        if (waiting != null) {
            kept.setState(new ContainerStateBuilder().withNewWaiting().withReason(waiting.getReason())
                    .withMessage(truncated(waiting.getMessage())).endWaiting().build());
            ContainerStateTerminated last = container.getLastState() == null ? null : container.getLastState().getTerminated();
            if (last != null) {
                kept.setLastState(new ContainerStateBuilder().withNewTerminated().withExitCode(last.getExitCode())
                        .withReason(last.getReason()).withMessage(truncated(last.getMessage())).endTerminated().build());
            }
        }
        return kept;
    }

    /** Characters of a container's waiting or termination message kept in the cache (its end, where the error is). */
    static final int TERMINATION_MESSAGE = 1024;

    private static String truncated(String message) {
        return message == null || message.length() <= TERMINATION_MESSAGE ? message
                : "..." + message.substring(message.length() - TERMINATION_MESSAGE);
    }

    /** A checkpoint volume claim: that it exists, and for which job. */
    static PersistentVolumeClaim checkpointClaim(PersistentVolumeClaim claim) {
        PersistentVolumeClaim kept = new PersistentVolumeClaim();
        kept.setMetadata(identity(claim));
        return kept;
    }

    /** The job's ConfigMap: metadata and data (the applied worker configuration is compared with a new spec). */
    static ConfigMap configMap(ConfigMap configMap) {
        ConfigMap kept = new ConfigMap();
        kept.setMetadata(ownedMetadata(configMap));
        kept.setData(configMap.getData());
        return kept;
    }

    /** The workers' Service: metadata. */
    static Service service(Service service) {
        Service kept = new Service();
        kept.setMetadata(ownedMetadata(service));
        return kept;
    }

    /** The workers' StatefulSet: metadata and replicas (the workers that run when a spec is refused). */
    static StatefulSet statefulSet(StatefulSet statefulSet) {
        StatefulSet kept = new StatefulSet();
        kept.setMetadata(ownedMetadata(statefulSet));
        StatefulSetSpec spec = new StatefulSetSpec();
        spec.setReplicas(statefulSet.getSpec() == null ? null : statefulSet.getSpec().getReplicas());
        kept.setSpec(spec);
        return kept;
    }

    private static ObjectMeta identity(HasMetadata object) {
        ObjectMeta meta = new ObjectMeta();
        meta.setName(object.getMetadata().getName());
        meta.setNamespace(object.getMetadata().getNamespace());
        meta.setUid(object.getMetadata().getUid());
        meta.setResourceVersion(object.getMetadata().getResourceVersion());
        meta.setLabels(object.getMetadata().getLabels());
        return meta;
    }

    private static ObjectMeta ownedMetadata(HasMetadata object) {
        ObjectMeta meta = identity(object);
        meta.setGeneration(object.getMetadata().getGeneration());
        meta.setAnnotations(withoutLastApplied(object.getMetadata().getAnnotations()));
        meta.setOwnerReferences(object.getMetadata().getOwnerReferences());
        meta.setDeletionTimestamp(object.getMetadata().getDeletionTimestamp());
        return meta;
    }

    private static Map<String, String> withoutLastApplied(Map<String, String> annotations) {
        if (annotations == null || !annotations.containsKey(LAST_APPLIED)) {
            return annotations;
        }
        Map<String, String> kept = new HashMap<>(annotations);
        kept.remove(LAST_APPLIED);
        return kept;
    }

    /** Informer store of StreamJobs (named in the controller's configuration). */
    public static final class StreamJobs extends TransformingItemStore<StreamJob> {
        public StreamJobs() {
            super(CachedObjects::streamJob);
        }
    }

    /** Informer store of worker pods. */
    public static final class Pods extends TransformingItemStore<Pod> {
        public Pods() {
            super(CachedObjects::pod);
        }
    }

    /** Informer store of checkpoint volume claims. */
    public static final class CheckpointClaims extends TransformingItemStore<PersistentVolumeClaim> {
        public CheckpointClaims() {
            super(CachedObjects::checkpointClaim);
        }
    }

    /** Informer store of the jobs' ConfigMaps. */
    public static final class ConfigMaps extends TransformingItemStore<ConfigMap> {
        public ConfigMaps() {
            super(CachedObjects::configMap);
        }
    }

    /** Informer store of the workers' Services. */
    public static final class Services extends TransformingItemStore<Service> {
        public Services() {
            super(CachedObjects::service);
        }
    }

    /** Informer store of the workers' StatefulSets. */
    public static final class StatefulSets extends TransformingItemStore<StatefulSet> {
        public StatefulSets() {
            super(CachedObjects::statefulSet);
        }
    }
}
