package io.oncestream.operator;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.cache.CachedObjects;
import io.oncestream.operator.model.CheckedSpecs;
import io.oncestream.operator.model.CheckpointCompatibility;
import io.oncestream.operator.model.WorkerJobConfigs;
import io.oncestream.operator.model.WorkerSettings;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.PhaseEvents;
import io.oncestream.operator.status.ReconcileFailures;
import io.oncestream.operator.status.StatusChanges;
import io.oncestream.operator.status.StatusProjection;

/**
 * Reconciles a StreamJob: checks the spec (CEL compiled, fields mapped), refuses changes its
 * checkpoints cannot follow, applies the ConfigMap, headless Service and StatefulSet with
 * server-side apply (only when they differ), then projects the status from the worker pods
 * and their {@code /progress}, patching it only when it changed. The workflow is invoked
 * explicitly: an invalid or refused spec leaves existing workers exactly as they are.
 */
@ControllerConfiguration(name = StreamJobReconciler.NAME, informer = @Informer(itemStore = CachedObjects.StreamJobs.class,
        informerListLimit = CachedObjects.LIST_PAGE))
@Workflow(explicitInvocation = true, dependents = {
        @Dependent(name = "config", type = WorkerConfigMapDependent.class),
        @Dependent(name = "service", type = WorkerServiceDependent.class),
        @Dependent(name = "workers", type = WorkerStatefulSetDependent.class, dependsOn = {"config", "service"})
})
public class StreamJobReconciler implements Reconciler<StreamJob> {

    /** Controller name, used in the SDK's settings ({@code quarkus.operator-sdk.controllers.streamjob.*}). */
    public static final String NAME = "streamjob";

    private static final Logger LOG = Logger.getLogger(StreamJobReconciler.class);

    private final WorkerSettings settings;
    private final ProgressPoller poller;
    private final ProgressWatch watch;
    private final Duration pollInterval;
    private final JobEvents events;
    private final OperatorMetrics metrics;
    private final CheckedSpecs specs = new CheckedSpecs(WorkerJobConfigs::from);

    public StreamJobReconciler(OperatorConfig config, KubernetesClient client, OperatorMetrics metrics) {
        this.metrics = metrics;
        this.settings = new WorkerSettings(config.workerImage(), config.workerImagePullPolicy(),
                config.workerTerminationGraceSeconds());
        this.poller = new ProgressPoller(config.pollTimeout());
        this.watch = new ProgressWatch(poller, config.pollInterval(), metrics);
        this.pollInterval = config.pollInterval();
        this.events = new JobEvents(client);
        metrics.countReconciledJobs(specs::size);
        metrics.countPolledJobs(watch::watchedJobs);
    }

    @Override
    public List<EventSource<?, StreamJob>> prepareEventSources(EventSourceContext<StreamJob> context) {
        // Worker pods: their readiness and IPs decide what is polled, and their changes trigger a reconcile.
        InformerEventSourceConfiguration<Pod> pods = InformerEventSourceConfiguration.from(Pod.class, StreamJob.class)
                .withName("worker-pods")
                .withLabelSelector(StreamJobResources.MANAGED_SELECTOR)
                .withSecondaryToPrimaryMapper(StreamJobReconciler::jobOf)
                .withItemStore(new CachedObjects.Pods())
                .withInformerListLimit(CachedObjects.LIST_PAGE)
                .build();
        // Checkpoint volumes: whether a job has checkpoints decides whether a change is refused, and
        // deleting them (to accept the change) triggers a reconcile.
        InformerEventSourceConfiguration<PersistentVolumeClaim> checkpoints = InformerEventSourceConfiguration
                .from(PersistentVolumeClaim.class, StreamJob.class)
                .withName("checkpoint-volumes")
                .withLabelSelector(StreamJobResources.MANAGED_SELECTOR)
                .withSecondaryToPrimaryMapper(StreamJobReconciler::jobOf)
                .withItemStore(new CachedObjects.CheckpointClaims())
                .withInformerListLimit(CachedObjects.LIST_PAGE)
                .build();
        return List.of(new InformerEventSource<>(pods, context), new InformerEventSource<>(checkpoints, context), watch.changes());
    }

    /** The job an object was made for, from its {@link StreamJobResources#JOB_LABEL}. */
    private static Set<ResourceID> jobOf(HasMetadata object) {
        String job = object.getMetadata().getLabels() == null ? null
                : object.getMetadata().getLabels().get(StreamJobResources.JOB_LABEL);
        return job == null ? Set.of() : Set.of(new ResourceID(job, object.getMetadata().getNamespace()));
    }

    /**
     * One pass of the protocol: check the spec, refuse what the checkpoints cannot follow, apply
     * the workers, poll them, and patch the status if it changed.
     */
    @Override
    public UpdateControl<StreamJob> reconcile(StreamJob job, Context<StreamJob> context) {
        metrics.watch(context.getPrimaryCache());
        CheckedSpecs.Checked spec = checkSpec(job, context);
        String refusal = spec.config() == null ? null : refusal(job, spec.config(), context).orElse(null);
        boolean apply = spec.config() != null && refusal == null;
        int replicas;
        if (apply) {
            boolean drained = drained(job, spec.config());
            applyWorkers(spec.config(), drained, context);
            if (drained) {
                watch.forget(ResourceID.fromResource(job));
                metrics.reconciled(false, false);
                return UpdateControl.noUpdate();
            }
            replicas = Boolean.TRUE.equals(job.getSpec().suspend) ? 0 : spec.config().parallelism();
        } else {
            replicas = runningReplicas(context); // nothing is applied: the workers that run keep running and are reported
        }
        Polled polled = spec.error() != null ? Polled.NONE : pollWorkers(job, replicas, context);
        // Polled again every poll interval while some worker has an address; reconciled again
        // when what the workers say changes. Until a pod has an address, its changes (created,
        // running, deleted) come as pod events and reconcile the job.
        watch.polled(ResourceID.fromResource(job), jobId(job), polled.expected(), polled.workers(), polled.anyAddress(),
                context.getPrimaryCache());
        StreamJobStatus projected = StatusProjection.project(job, job.getStatus(), spec.error(), refusal, polled.workers(),
                Instant.now().truncatedTo(ChronoUnit.SECONDS));
        UpdateControl<StreamJob> control = patchIfChanged(job, projected, refusal != null);
        if (apply && projected.phase == StreamJobStatus.Phase.Completed) {
            // Drained (availableNow): the workers' answers will not change again, so no poll
            // brings the job back; the next reconcile, which reads this status, stops them.
            control.rescheduleAfter(pollInterval);
        }
        return control;
    }

    /** The worker configuration of the spec, or the error naming the field; computed once per generation. */
    private CheckedSpecs.Checked checkSpec(StreamJob job, Context<StreamJob> context) {
        return specs.of(job, () -> context.getPrimaryCache().list().map(j -> j.getMetadata().getUid()).collect(Collectors.toSet()));
    }

    /**
     * An availableNow job whose workers all reported COMPLETED for this spec is done: its workers
     * are stopped rather than restarted to find nothing left, and its status stays.
     */
    private static boolean drained(StreamJob job, JobConfig desired) {
        StreamJobStatus previous = job.getStatus();
        return desired.trigger().availableNow() && previous != null && previous.phase == StreamJobStatus.Phase.Completed
                && Objects.equals(previous.observedGeneration, job.getMetadata().getGeneration());
    }

    /** Server-side applies the ConfigMap, the headless Service and the StatefulSet where they differ. */
    private void applyWorkers(JobConfig desired, boolean drained, Context<StreamJob> context) {
        new ReconcileInputs(desired, settings, drained).putInto(context);
        context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
    }

    private static int runningReplicas(Context<StreamJob> context) {
        return context.getSecondaryResource(StatefulSet.class)
                .map(s -> s.getSpec().getReplicas() == null ? 0 : s.getSpec().getReplicas()).orElse(0);
    }

    /** What the workers said, one entry per ordinal, and whether any of them had an address to ask. */
    private record Polled(List<WorkerPods.Expected> expected, List<StatusProjection.Worker> workers, boolean anyAddress) {
        static final Polled NONE = new Polled(List.of(), List.of(), false);
    }

    /** {@code /progress} of every expected worker that has an address; one entry per ordinal. */
    private Polled pollWorkers(StreamJob job, int replicas, Context<StreamJob> context) {
        List<WorkerPods.Expected> expected = WorkerPods.expected(job.getMetadata().getName(), replicas,
                context.getSecondaryResources(Pod.class));
        List<StatusProjection.Worker> workers = poller.poll(jobId(job), expected);
        metrics.polled(expected, workers);
        return new Polled(expected, workers, expected.stream().anyMatch(e -> e.pollAddress() != null));
    }

    private static String jobId(StreamJob job) {
        return StreamJobResources.jobId(job.getMetadata().getNamespace(), job.getMetadata().getName());
    }

    /** A status patch and the events of the phase changes when the projection differs; otherwise nothing. */
    private UpdateControl<StreamJob> patchIfChanged(StreamJob job, StreamJobStatus projected, boolean refused) {
        StreamJobStatus previous = job.getStatus();
        boolean changed = StatusChanges.differ(previous, projected);
        metrics.reconciled(changed, refused);
        if (!changed) {
            return UpdateControl.noUpdate();
        }
        List<PhaseEvents.JobEvent> changes = PhaseEvents.between(previous, projected);
        changes.forEach(e -> LOG.infof("%s/%s: %s %s", job.getMetadata().getNamespace(), job.getMetadata().getName(),
                e.reason(), e.message()));
        events.record(job, changes);
        return UpdateControl.patchStatus(statusPatch(job, projected));
    }

    /**
     * A reconcile that threw (the API server refused a write, a dependent could not be applied):
     * the status says so in {@code Ready} (reason {@code ReconcileFailed}) and a Warning event
     * records it once per distinct failure; the SDK retries with back-off.
     */
    @Override
    public ErrorStatusUpdateControl<StreamJob> updateErrorStatus(StreamJob job, Context<StreamJob> context, Exception e) {
        String failure = ReconcileFailures.describe(e);
        String name = job.getMetadata().getName();
        LOG.warnf("%s/%s: reconcile failed: %s", job.getMetadata().getNamespace(), name, failure);
        StreamJobStatus previous = job.getStatus();
        StreamJobStatus failed = StatusProjection.reconcileFailed(previous, failure, Instant.now().truncatedTo(ChronoUnit.SECONDS));
        if (!StatusChanges.differ(previous, failed)) {
            return ErrorStatusUpdateControl.noStatusUpdate();
        }
        events.record(job, List.of(new PhaseEvents.JobEvent("Warning", "ReconcileFailed", failure)));
        return ErrorStatusUpdateControl.patchStatus(statusPatch(job, failed));
    }

    /** A StreamJob that carries only its name and {@code status}: what a status patch sends. */
    private static StreamJob statusPatch(StreamJob job, StreamJobStatus status) {
        StreamJob patch = new StreamJob();
        patch.setMetadata(new ObjectMetaBuilder().withName(job.getMetadata().getName())
                .withNamespace(job.getMetadata().getNamespace()).build());
        patch.setStatus(status);
        return patch;
    }

    /** A change of topics, table or parallelism under existing checkpoints, compared with the applied ConfigMap. */
    private Optional<String> refusal(StreamJob job, JobConfig desired, Context<StreamJob> context) {
        Optional<ConfigMap> applied = context.getSecondaryResource(ConfigMap.class);
        if (applied.isEmpty() || applied.get().getData() == null
                || applied.get().getData().get(StreamJobResources.CONFIG_KEY) == null) {
            return Optional.empty();
        }
        JobConfig running;
        try {
            running = JobConfigs.parse(applied.get().getData().get(StreamJobResources.CONFIG_KEY));
        } catch (InvalidConfigException e) {
            LOG.warnf("%s/%s: the applied ConfigMap does not parse (%s); it will be replaced",
                    job.getMetadata().getNamespace(), job.getMetadata().getName(), e.getMessage());
            return Optional.empty();
        }
        Optional<String> refusal = CheckpointCompatibility.refusal(running, desired);
        if (refusal.isEmpty()) {
            return refusal;
        }
        boolean checkpoints = !context.getSecondaryResources(PersistentVolumeClaim.class).isEmpty();
        return checkpoints ? refusal : Optional.empty();
    }
}
