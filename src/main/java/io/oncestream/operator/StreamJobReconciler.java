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
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.cache.CachedObjects;
import io.oncestream.operator.handoff.Applied;
import io.oncestream.operator.handoff.Handoff;
import io.oncestream.operator.handoff.Handoffs;
import io.oncestream.operator.model.Autoscaler;
import io.oncestream.operator.model.CheckedSpecs;
import io.oncestream.operator.model.SpecValidator;
import io.oncestream.operator.model.WorkerSettings;
import io.oncestream.operator.progress.Barriers;
import io.oncestream.operator.progress.OperatorLag;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.PhaseEvents;
import io.oncestream.operator.status.ReconcileFailures;
import io.oncestream.operator.status.Rescale;
import io.oncestream.operator.status.StatusChanges;
import io.oncestream.operator.status.StatusProjection;
import io.oncestream.operator.status.WorkerProgress;

/**
 * Reconciles a StreamJob: checks the spec (CEL compiled, fields mapped), refuses changes its
 * checkpoints cannot follow, applies the ConfigMap, headless Service and StatefulSet with
 * server-side apply (only when they differ; a change on running workers goes through the
 * hand-off of {@link Handoffs}), then projects the status from the worker pods and their
 * {@code /progress}, patching it only when it changed. The workflow is invoked
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
    private final Handoffs handoffs;
    private final OperatorMetrics metrics;
    /** Reconciles a job whose lag, read by the operator itself, changed or is behind. */
    private final SimpleInboundEventSource<StreamJob> lagReadings = new SimpleInboundEventSource<>("lag-readings");
    /** The jobs that exist, once the SDK hands over its cache: the operator's lag probes of the others are closed. */
    private volatile IndexedResourceCache<StreamJob> jobs;
    private final OperatorLag operatorLag = new OperatorLag(lagReadings::propagateEvent,
            id -> jobs == null || jobs.get(id).isPresent());
    private final CheckedSpecs specs = new CheckedSpecs(SpecValidator::check);
    /** Logs once when every job has been reconciled since start. */
    private final CatchUp catchUp = CatchUp.ofThisProcess();

    public StreamJobReconciler(OperatorConfig config, KubernetesClient client, OperatorMetrics metrics) {
        this.metrics = metrics;
        this.settings = new WorkerSettings(config.workerImage(), config.workerImagePullPolicy(),
                config.workerTerminationGraceSeconds());
        this.poller = new ProgressPoller(config.pollTimeout());
        this.watch = new ProgressWatch(poller, config.pollInterval(), metrics);
        this.pollInterval = config.pollInterval();
        this.events = new JobEvents(client);
        this.handoffs = new Handoffs(client, poller, new Barriers(config.pollTimeout()), events::record);
        metrics.countReconciledJobs(specs::size);
        metrics.countPolledJobs(watch::watchedJobs);
        metrics.countPendingJobs(watch::pendingJobs);
    }

    @Override
    public List<EventSource<?, StreamJob>> prepareEventSources(EventSourceContext<StreamJob> context) {
        metrics.watch(context.getPrimaryCache()); // the same cache a reconcile's context reads: the jobs counted by phase
        jobs = context.getPrimaryCache();
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
        return List.of(new InformerEventSource<>(pods, context), new InformerEventSource<>(checkpoints, context), watch.changes(),
                lagReadings);
    }

    /** The job an object was made for, from its {@link StreamJobResources#JOB_LABEL}. */
    private static Set<ResourceID> jobOf(HasMetadata object) {
        String job = object.getMetadata().getLabels() == null ? null
                : object.getMetadata().getLabels().get(StreamJobResources.JOB_LABEL);
        return job == null ? Set.of() : Set.of(new ResourceID(job, object.getMetadata().getNamespace()));
    }

    /**
     * One pass of the protocol, timed: check the spec and refuse what the checkpoints cannot
     * follow, apply the workers, poll them, project the status and publish it if it changed.
     */
    @Override
    public UpdateControl<StreamJob> reconcile(StreamJob job, Context<StreamJob> context) {
        UpdateControl<StreamJob> control = metrics.timed(() -> {
            Desired desired = validate(job, context);
            Applying applying = apply(job, desired, context);
            if (applying.drained()) {
                return publishDrained(job);
            }
            Observed observed = observe(job, desired, applying, context);
            StreamJobStatus projected = project(job, desired, applying, observed);
            return reschedule(publish(job, projected, desired.refusal() != null, context), desired, applying, projected);
        });
        catchUp.reconciled(specs.size(), () -> (int) context.getPrimaryCache().list().count());
        return control;
    }

    /**
     * What the spec asks for: its worker configuration (null with the error naming the field),
     * the number of workers the autoscaler chose, what runs now, and why a valid change is not
     * applied (null if it is).
     */
    private record Desired(CheckedSpecs.Checked spec, Applied applied, JobConfig config, Autoscaler.Decision scaling,
            String refusal) {

        boolean applies() {
            return config != null && refusal == null;
        }
    }

    /** What this reconcile applied: the hand-off's stage and the workers expected to run. */
    private record Applying(Handoff handoff, int replicas, boolean drained) {
    }

    /** What the workers said, and what follows from it. */
    private record Observed(Polled polled, Integer epoch, Rescale rescale, WorkerProgress.LagReport operatorLag) {
    }

    private Desired validate(StreamJob job, Context<StreamJob> context) {
        CheckedSpecs.Checked spec = checkSpec(job, context);
        Applied applied = Applied.of(job, context.getSecondaryResource(ConfigMap.class));
        JobConfig config = spec.config();
        Autoscaler.Decision scaling = null;
        if (config != null && job.getSpec().autoscaling != null) {
            // The autoscaler chooses the number of workers; everything else is the spec's.
            scaling = Autoscaler.decide(job.getSpec(), job.getStatus(),
                    applied.config() == null ? null : applied.config().parallelism(), config, Instant.now());
            config = config.withParallelism(scaling.parallelism());
        }
        String refusal = config == null ? null : refusal(job, config, applied, context).orElse(null);
        return new Desired(spec, applied, config, scaling, refusal);
    }

    private Applying apply(StreamJob job, Desired desired, Context<StreamJob> context) {
        if (!desired.applies()) {
            // Nothing is applied: the workers that run keep running and are reported.
            return new Applying(Handoff.NONE, runningReplicas(context), false);
        }
        Applied applied = desired.applied();
        Handoff handoff = handoffs.decide(job, desired.config(), applied, context);
        if (handoff.waiting()) {
            // Stopping at the barrier: the workers keep the configuration they run (started
            // again if an availableNow job had stopped them: they seal at once).
            applyWorkers(applied.config(), applied.savepoint(), false, context);
            return new Applying(handoff, applied.config().parallelism(), false);
        }
        boolean drained = drained(job, desired.config());
        applyWorkers(handoff.config(), handoff.savepoint(), drained, context);
        if (handoff.rescale() != null) {
            handoffs.deleteParkedWorkers(job, handoff.savepoint(), context); // after the new shape is applied
        }
        return new Applying(handoff, Boolean.TRUE.equals(job.getSpec().suspend) ? 0 : handoff.config().parallelism(), drained);
    }

    private Observed observe(StreamJob job, Desired desired, Applying applying, Context<StreamJob> context) {
        Polled polled = desired.spec().error() != null ? Polled.NONE : pollWorkers(job, applying.replicas(), context);
        // Polled again every poll interval while some worker has an address; reconciled again
        // when what the workers say changes. Until a pod has an address, its changes (created,
        // running, deleted) come as pod events and reconcile the job.
        watch.polled(ResourceID.fromResource(job), StreamJobResources.jobId(job), polled.expected(), polled.answers(), polled.anyAddress(),
                context.getPrimaryCache());
        Applied applied = desired.applied();
        Handoff handoff = applying.handoff();
        Integer epoch = handoff.savepoint() != null ? Integer.valueOf(handoff.savepoint().epoch())
                : applied.config() == null ? null : Integer.valueOf(applied.epoch());
        Rescale rescale = handoffs.observe(job, handoff, applied, polled.workers());
        return new Observed(polled, epoch, rescale, operatorLag(job, desired.config(), polled));
    }

    private static StreamJobStatus project(StreamJob job, Desired desired, Applying applying, Observed observed) {
        StreamJobStatus projected = StatusProjection.project(job, job.getStatus(), desired.spec().error(), desired.refusal(),
                observed.polled().workers(), Instant.now().truncatedTo(ChronoUnit.SECONDS), observed.epoch(), observed.rescale(),
                observed.operatorLag());
        if (desired.scaling() != null && desired.spec().error() == null) {
            projected.autoscaler = desired.scaling().state();
        }
        return projected;
    }

    /** When to look at the job again without waiting for a change. */
    private UpdateControl<StreamJob> reschedule(UpdateControl<StreamJob> control, Desired desired, Applying applying,
            StreamJobStatus projected) {
        if (desired.applies() && projected.phase == StreamJobStatus.Phase.Completed) {
            // Drained (availableNow): the workers' answers will not change again, so no poll
            // brings the job back; the next reconcile, which reads this status, stops them.
            control.rescheduleAfter(pollInterval);
        } else if (applying.handoff().waiting()) {
            control.rescheduleAfter(Handoffs.BARRIER_POLL); // the barrier is asked for and checked until every worker sealed
        } else if (desired.scaling() != null && desired.scaling().watching()) {
            // An autoscaler window is open: looked at again without waiting for a change. (The
            // operator's own lag readings reconcile a job when they change: OperatorLag.)
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
    private void applyWorkers(JobConfig desired, Savepoint savepoint, boolean drained, Context<StreamJob> context) {
        new ReconcileInputs(desired, savepoint, settings, drained).putInto(context);
        context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
    }

    private static int runningReplicas(Context<StreamJob> context) {
        return context.getSecondaryResource(StatefulSet.class)
                .map(s -> s.getSpec().getReplicas() == null ? 0 : s.getSpec().getReplicas()).orElse(0);
    }

    /** What the workers said, one entry per ordinal, and whether any of them had an address to ask. */
    private record Polled(List<WorkerPods.Expected> expected, ProgressPoller.Answers answers, boolean anyAddress) {
        static final Polled NONE = new Polled(List.of(), new ProgressPoller.Answers(List.of(), List.of()), false);

        List<StatusProjection.Worker> workers() {
            return answers.workers();
        }
    }

    /**
     * {@code /progress} of every expected worker that has an address, one entry per ordinal:
     * asked, except where the watch's long-polls of the same pod hold its current answer.
     */
    private Polled pollWorkers(StreamJob job, int replicas, Context<StreamJob> context) {
        List<WorkerPods.Expected> expected = WorkerPods.expected(job.getMetadata().getName(), replicas,
                context.getSecondaryResources(Pod.class));
        List<StatusProjection.Worker> known = watch.known(ResourceID.fromResource(job), expected);
        ProgressPoller.Answers answers = poller.poll(StreamJobResources.jobId(job), expected, known);
        metrics.polled(expected, known, answers.workers());
        return new Polled(expected, answers, expected.stream().anyMatch(e -> e.pollAddress() != null));
    }

    /**
     * The lag read by the operator itself, for a running job none of whose workers answers (all
     * gone, crash-looping, unschedulable), so that it keeps growing in the status; null until
     * its first reading. A job that no longer wants it (its workers answer again, it is
     * suspended, its spec is invalid) has its probe closed.
     */
    private WorkerProgress.LagReport operatorLag(StreamJob job, JobConfig config, Polled polled) {
        if (!lagWanted(job, config, polled)) {
            operatorLag.release(ResourceID.fromResource(job));
            return null;
        }
        boolean withSecret = job.getSpec().source != null && job.getSpec().source.kafka != null
                && job.getSpec().source.kafka.secretRef != null;
        return operatorLag.lag(ResourceID.fromResource(job), config.source(), withSecret).map(r -> {
            long now = System.currentTimeMillis();
            java.util.Map<String, WorkerProgress.PartitionLag> partitions = new java.util.TreeMap<>();
            r.partitions().forEach((p, l) -> partitions.put(p,
                    new WorkerProgress.PartitionLag(l.committed(), l.latest(), l.records(), l.ageMs(now), false)));
            return new WorkerProgress.LagReport(r.at().toString(), partitions);
        }).orElse(null);
    }

    /**
     * A job that should run workers, none of which answers with a lag it could read: no worker
     * answers (one that answers without a lag, of an older build or with --lag-interval 0, still
     * has its plan's lag counted), or every one that answers cannot reach Kafka (a network
     * partition between the workers and the brokers: their figures would stay frozen).
     */
    private static boolean lagWanted(StreamJob job, JobConfig config, Polled polled) {
        return config != null && !Boolean.TRUE.equals(job.getSpec().suspend) && !polled.expected().isEmpty()
                && polled.workers().stream().noneMatch(w -> w.progress() != null && w.progress().sourceAvailable());
    }

    /** Container restarts of the job's worker pods as the cache has them. */
    private static long workerRestarts(Context<StreamJob> context) {
        return context.getSecondaryResources(Pod.class).stream()
                .filter(p -> p.getStatus() != null && p.getStatus().getContainerStatuses() != null)
                .flatMap(p -> p.getStatus().getContainerStatuses().stream())
                .mapToLong(c -> c.getRestartCount() == null ? 0 : c.getRestartCount()).sum();
    }

    /**
     * Publishes the projection: the job's figures to the metrics, then, when it differs from the
     * stored status, a status patch and the events of the phase changes; otherwise nothing.
     */
    private UpdateControl<StreamJob> publish(StreamJob job, StreamJobStatus projected, boolean refused, Context<StreamJob> context) {
        metrics.job(StreamJobResources.jobId(job), projected, workerRestarts(context));
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
     * A drained job's publish step: its workers are stopped and no longer polled, and its status
     * (Completed) stays as it is, so nothing is patched and its figures stay as they were.
     */
    private UpdateControl<StreamJob> publishDrained(StreamJob job) {
        watch.forget(ResourceID.fromResource(job));
        operatorLag.release(ResourceID.fromResource(job));
        metrics.reconciled(false, false);
        return UpdateControl.noUpdate();
    }

    /**
     * A reconcile that threw (the API server refused a write, a dependent could not be applied):
     * the status says so in {@code Ready} (reason {@code ReconcileFailed}) and a Warning event
     * records it once per distinct failure; the SDK retries with back-off.
     */
    @Override
    public ErrorStatusUpdateControl<StreamJob> updateErrorStatus(StreamJob job, Context<StreamJob> context, Exception e) {
        metrics.reconcileFailed();
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

    /** A change of topics or table under existing checkpoints, or of parallelism where no rescale can run, compared with the applied ConfigMap. */
    private static Optional<String> refusal(StreamJob job, JobConfig desired, Applied applied, Context<StreamJob> context) {
        return SpecValidator.refusal(job, desired, applied.config(),
                applied.config() != null && !context.getSecondaryResources(PersistentVolumeClaim.class).isEmpty());
    }
}
