package io.oncestream.operator;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
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

/**
 * Reconciles a StreamJob: checks the spec (CEL compiled, fields mapped), refuses changes its
 * checkpoints cannot follow, applies the ConfigMap, headless Service and StatefulSet with
 * server-side apply (only when they differ), then projects the status from the worker pods
 * and their {@code /progress}, patching it only when it changed. The workflow is invoked
 * explicitly: an invalid or refused spec leaves existing workers exactly as they are.
 */
@ControllerConfiguration(name = StreamJobReconciler.NAME)
@Workflow(explicitInvocation = true, dependents = {
        @Dependent(name = "config", type = WorkerConfigMapDependent.class),
        @Dependent(name = "service", type = WorkerServiceDependent.class),
        @Dependent(name = "workers", type = WorkerStatefulSetDependent.class, dependsOn = {"config", "service"})
})
public class StreamJobReconciler implements Reconciler<StreamJob> {

    /** Controller name, used in the SDK's settings ({@code quarkus.operator-sdk.controllers.streamjob.*}). */
    public static final String NAME = "streamjob";

    private static final Logger LOG = Logger.getLogger(StreamJobReconciler.class);

    private final OperatorConfig config;
    private final WorkerSettings settings;
    private final ProgressPoller poller;
    private final JobEvents events;
    private final OperatorMetrics metrics;
    private final CheckedSpecs specs = new CheckedSpecs(WorkerJobConfigs::from);

    public StreamJobReconciler(OperatorConfig config, KubernetesClient client, OperatorMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        this.settings = new WorkerSettings(config.workerImage(), config.workerImagePullPolicy(),
                config.workerTerminationGraceSeconds());
        this.poller = new ProgressPoller(config.pollTimeout());
        this.events = new JobEvents(client);
    }

    @Override
    public List<EventSource<?, StreamJob>> prepareEventSources(EventSourceContext<StreamJob> context) {
        // Worker pods: their readiness and IPs decide what is polled, and their changes trigger a reconcile.
        InformerEventSourceConfiguration<Pod> pods = InformerEventSourceConfiguration.from(Pod.class, StreamJob.class)
                .withName("worker-pods")
                .withLabelSelector(ReconcileInputs.MANAGED_SELECTOR)
                .withSecondaryToPrimaryMapper(pod -> {
                    String job = pod.getMetadata().getLabels() == null ? null
                            : pod.getMetadata().getLabels().get(StreamJobResources.JOB_LABEL);
                    return job == null ? Set.of() : Set.of(new ResourceID(job, pod.getMetadata().getNamespace()));
                })
                .build();
        return List.of(new InformerEventSource<>(pods, context));
    }

    @Override
    public UpdateControl<StreamJob> reconcile(StreamJob job, Context<StreamJob> context) {
        metrics.watch(context.getPrimaryCache());
        String name = job.getMetadata().getName();
        CheckedSpecs.Checked checked = specs.of(job,
                () -> context.getPrimaryCache().list().map(j -> j.getMetadata().getUid()).collect(Collectors.toSet()));
        JobConfig desired = checked.config();
        String configError = checked.error();
        String refusal = desired == null ? null : refusal(job, desired, context).orElse(null);
        StreamJobStatus previous = job.getStatus();
        // An availableNow job whose workers all reported COMPLETED for this spec is done: its
        // workers are stopped rather than restarted to find nothing left, and its status stays.
        boolean drained = desired != null && desired.trigger().availableNow() && previous != null
                && previous.phase == StreamJobStatus.Phase.Completed
                && Objects.equals(previous.observedGeneration, job.getMetadata().getGeneration());
        int replicas;
        if (desired != null && refusal == null) {
            new ReconcileInputs(desired, settings, drained).putInto(context);
            context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
            if (drained) {
                metrics.reconciled(false, false);
                return UpdateControl.noUpdate();
            }
            replicas = Boolean.TRUE.equals(job.getSpec().suspend) ? 0 : desired.parallelism();
        } else {
            // Nothing is applied: the workers that run keep running, and are still reported.
            replicas = context.getSecondaryResource(StatefulSet.class)
                    .map(s -> s.getSpec().getReplicas() == null ? 0 : s.getSpec().getReplicas()).orElse(0);
        }

        List<WorkerPods.Expected> expected = configError != null ? List.of()
                : WorkerPods.expected(name, replicas, context.getSecondaryResources(Pod.class));
        List<StatusProjection.Worker> workers = poller.poll(expected);
        long polled = expected.stream().filter(e -> e.pollAddress() != null).count();
        long answered = workers.stream().filter(w -> w.progress() != null).count();
        metrics.polled(answered, polled - answered);
        StreamJobStatus projected = StatusProjection.project(job, previous, configError, refusal, workers,
                Instant.now().truncatedTo(ChronoUnit.SECONDS));

        UpdateControl<StreamJob> control;
        boolean changed = StatusChanges.differ(previous, projected);
        metrics.reconciled(changed, refusal != null);
        if (changed) {
            List<PhaseEvents.JobEvent> changes = PhaseEvents.between(previous, projected);
            changes.forEach(e -> LOG.infof("%s/%s: %s %s", job.getMetadata().getNamespace(), name, e.reason(), e.message()));
            events.record(job, changes);
            control = UpdateControl.patchStatus(statusPatch(job, projected));
        } else {
            control = UpdateControl.noUpdate();
        }
        if (replicas > 0 && configError == null) {
            control.rescheduleAfter(config.pollInterval());
        }
        return control;
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
        boolean checkpoints = !context.getClient().persistentVolumeClaims().inNamespace(job.getMetadata().getNamespace())
                .withLabel(StreamJobResources.JOB_LABEL, job.getMetadata().getName()).list().getItems().isEmpty();
        return checkpoints ? refusal : Optional.empty();
    }
}
