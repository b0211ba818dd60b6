package io.oncestream.operator.handoff;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

import io.oncestream.api.ConditionReason;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.model.Savepoints;
import io.oncestream.operator.progress.Barriers;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.PhaseEvents;
import io.oncestream.operator.status.Rescale;
import io.oncestream.operator.status.StatusProjection;
import io.oncestream.operator.status.WorkerProgress;

/**
 * The hand-off's operator side (docs/protocol.md §11). A job whose applied configuration
 * differs from its spec, with checkpoints and not suspended, goes to a new epoch: every
 * worker is asked to stop at a batch boundary and seal its checkpoint; once all sealed,
 * their seals become the next epoch's savepoint, kept in an immutable ConfigMap before
 * anything is scaled; then the new configuration and shape are applied with it. So every
 * batch is judged by one configuration, and a new parallelism takes the partitions over
 * exactly. Every step is found again from what the API server and the workers hold, so an
 * operator that restarts anywhere goes on.
 *
 * <p>The reconciler asks {@link #decide} what to apply, applies it, then calls
 * {@link #deleteParkedWorkers} once a new shape is applied, and {@link #observe} with what
 * the workers said.
 */
public final class Handoffs {

    /** How often a rescale's barrier is checked while workers finish their batches. */
    public static final Duration BARRIER_POLL = Duration.ofSeconds(1);

    /**
     * Engine states of a worker that has planned in its epoch (it knows its partitions): a
     * rescale is complete when every new worker is in one of them.
     */
    private static final Set<EngineState> RUNNING = EnumSet.of(EngineState.READING, EngineState.WRITING,
            EngineState.COMMITTING, EngineState.IDLE, EngineState.COMPLETED);

    private static final Logger LOG = Logger.getLogger(Handoffs.class);

    private final KubernetesClient client;
    private final ProgressPoller poller;
    private final Barriers barriers;
    private final BiConsumer<StreamJob, List<PhaseEvents.JobEvent>> events;

    /** Seals seen for the epoch after the applied one: their hand-off goes on (see {@link SealsSeen}). */
    private final SealsSeen sealsSeen = new SealsSeen();

    /**
     * @param client writes the savepoint ConfigMap and deletes parked pods
     * @param poller reads the workers' {@code /progress}
     * @param barriers asks the workers to stop at a barrier
     * @param events records an event on the job (the savepoint taken)
     */
    public Handoffs(KubernetesClient client, ProgressPoller poller, Barriers barriers,
            BiConsumer<StreamJob, List<PhaseEvents.JobEvent>> events) {
        this.client = client;
        this.poller = poller;
        this.barriers = barriers;
        this.events = events;
    }

    /**
     * What to apply for {@code desired} when the workers run {@code applied}: directly, or the
     * next step of a hand-off. A change that keeps the parallelism is applied directly, as a
     * rolling restart, when some worker cannot stop at a barrier (not running, or failed: the
     * change may be its fix) and none has sealed yet.
     */
    public Handoff decide(StreamJob job, JobConfig desired, Applied applied, Context<StreamJob> context) {
        if (context.getSecondaryResources(PersistentVolumeClaim.class).isEmpty()) {
            // No checkpoints (a new job, or its volumes deleted to start over): no epoch to go on from.
            return new Handoff(desired, null, null, false);
        }
        Handoff direct = new Handoff(desired, applied.savepoint(), null, false);
        if (applied.config() == null || Boolean.TRUE.equals(job.getSpec().suspend)) {
            return direct;
        }
        boolean reshape = applied.config().parallelism() != desired.parallelism();
        boolean reconfigure = !JobConfigs.toJson(applied.config()).equals(JobConfigs.toJson(desired));
        boolean sealSeen = sealsSeen.pending(ResourceID.fromResource(job), applied.epoch());
        if (!reshape && !reconfigure && !barrierUnderway(job, applied) && !sealSeen) {
            return direct;
        }
        int next = applied.epoch() + 1;
        int from = applied.config().parallelism();
        Savepoint taken = takenSavepoint(job, next);
        if (taken == null) {
            List<WorkerPods.Expected> expected = WorkerPods.expected(job.getMetadata().getName(), from,
                    context.getSecondaryResources(Pod.class));
            List<StatusProjection.Worker> workers = poller.poll(StreamJobResources.jobId(job), expected);
            List<CheckpointSeal> seals = new ArrayList<>();
            List<WorkerPods.Expected> unsealed = new ArrayList<>();
            List<String> waiting = new ArrayList<>();
            boolean allRunning = true;
            for (int i = 0; i < from; i++) {
                StatusProjection.Worker w = workers.get(i);
                WorkerProgress p = w.progress();
                if (p != null && p.barrier() != null && p.barrier().nextEpoch() == next) {
                    seals.add(p.barrier());
                    continue;
                }
                unsealed.add(expected.get(i));
                allRunning &= p != null && !p.is(EngineState.FAILED);
                waiting.add(w.podName() + " " + (p == null ? w.unreachable() : p.state()
                        + (p.lastError() == null ? "" : ": " + p.lastError())));
            }
            if (!reshape && seals.isEmpty() && !allRunning) {
                return direct;
            }
            if (!unsealed.isEmpty()) {
                List<String> failures = barriers.request(unsealed, next);
                if (!failures.isEmpty()) {
                    LOG.infof("%s/%s: barrier for epoch %d not taken yet by %s", job.getMetadata().getNamespace(),
                            job.getMetadata().getName(), next, failures);
                }
                return new Handoff(null, null, new Rescale(Rescale.Stage.BARRIER, from, desired.parallelism(), next,
                        seals.size(), null, "waiting for " + String.join("; ", waiting)), true);
            }
            taken = takeSavepoint(job, Savepoint.of(StreamJobResources.jobId(job), next, desired.parallelism(), seals));
        }
        return new Handoff(desired.withParallelism(taken.toParallelism()), taken, new Rescale(Rescale.Stage.STARTING,
                taken.fromParallelism(), taken.toParallelism(), next, 0, taken.lastBatches(), null), false);
    }

    /**
     * Deletes the pods of workers parked at the barrier of {@code savepoint}'s epoch, so that
     * the new ones start at once instead of one by one as a rolling update would: every old
     * worker sealed its checkpoint before the savepoint was taken, so none has anything left to do.
     * Called after the new shape is applied.
     */
    public void deleteParkedWorkers(StreamJob job, Savepoint savepoint, Context<StreamJob> context) {
        List<WorkerPods.Expected> expected = WorkerPods.expected(job.getMetadata().getName(),
                Math.max(savepoint.fromParallelism(), savepoint.toParallelism()), context.getSecondaryResources(Pod.class));
        deleteParked(job, savepoint, poller.poll(StreamJobResources.jobId(job), expected));
    }

    /**
     * The rescale as the status shows it, once {@code workers} (the workers of this reconcile's
     * shape, one per ordinal) were polled: the hand-off's own stage if this reconcile is in
     * one, else whether the new workers have started; null if there is no rescale. A pod
     * recreated from the old revision parks at the barrier: it is replaced. Seals for the next
     * epoch are remembered, so that the hand-off goes on.
     */
    public Rescale observe(StreamJob job, Handoff handoff, Applied applied, List<StatusProjection.Worker> workers) {
        Rescale rescale = handoff.rescale() != null ? handoff.rescale() : rescaleAfterStart(job, applied, workers);
        if (rescale != null && rescale.stage() == Rescale.Stage.STARTING && handoff.rescale() == null && applied.savepoint() != null) {
            deleteParked(job, applied.savepoint(), workers); // a pod recreated from the old revision parks: replace it
        }
        rememberSeals(job, applied, workers);
        return rescale;
    }

    /**
     * Whether the stored status says a barrier was asked for in the applied epoch (the spec may
     * have been reverted since). A status of an epoch that is no longer the applied one (an
     * operator stopped between applying the new epoch and patching the status) does not count.
     */
    private static boolean barrierUnderway(StreamJob job, Applied applied) {
        StreamJobStatus status = job.getStatus();
        return status != null && status.epoch != null && status.epoch == applied.epoch()
                && status.condition(ConditionType.Rescaling)
                        .map(c -> "True".equals(c.status) && ConditionReason.StoppingAtBarrier.name().equals(c.reason)).orElse(false);
    }

    /** The savepoint of epoch {@code epoch} if it was taken (read from the API server, not a cache: it decides what is scaled). */
    private Savepoint takenSavepoint(StreamJob job, int epoch) {
        ConfigMap map = client.configMaps().inNamespace(job.getMetadata().getNamespace())
                .withName(Savepoints.name(job.getMetadata().getName(), epoch)).get();
        return Savepoints.of(map);
    }

    /** Writes the savepoint before anything is scaled; one that a previous attempt wrote is read back instead. */
    private Savepoint takeSavepoint(StreamJob job, Savepoint savepoint) {
        try {
            client.configMaps().inNamespace(job.getMetadata().getNamespace()).resource(Savepoints.desired(job, savepoint)).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            return takenSavepoint(job, savepoint.epoch());
        }
        String message = "savepoint of epoch " + savepoint.epoch() + " taken after batches " + savepoint.lastBatches() + " ("
                + savepoint.partitions().size() + " partitions); starting " + savepoint.toParallelism() + " workers";
        LOG.infof("%s/%s: %s", job.getMetadata().getNamespace(), job.getMetadata().getName(), message);
        events.accept(job, List.of(new PhaseEvents.JobEvent("Normal", "SavepointTaken", message)));
        return savepoint;
    }

    /** Deletes the pods of those of {@code workers} that are parked at a barrier of {@code savepoint}'s epoch or before. */
    private void deleteParked(StreamJob job, Savepoint savepoint, List<StatusProjection.Worker> workers) {
        for (StatusProjection.Worker w : workers) {
            WorkerProgress p = w.progress();
            if (p != null && p.barrier() != null && p.barrier().nextEpoch() <= savepoint.epoch() && p.epoch() < savepoint.epoch()) {
                client.pods().inNamespace(job.getMetadata().getNamespace()).withName(w.podName()).delete();
            }
        }
    }

    private void rememberSeals(StreamJob job, Applied applied, List<StatusProjection.Worker> workers) {
        boolean sealed = workers.stream().map(StatusProjection.Worker::progress)
                .anyMatch(p -> p != null && p.barrier() != null && p.barrier().nextEpoch() == applied.epoch() + 1);
        sealsSeen.observed(ResourceID.fromResource(job), applied.epoch(), sealed);
    }

    /**
     * After the new shape is applied: the rescale is {@code STARTING} until every worker reports
     * progress in the new epoch, then {@code COMPLETED}; null when the status shows no rescale.
     */
    private static Rescale rescaleAfterStart(StreamJob job, Applied applied, List<StatusProjection.Worker> workers) {
        boolean starting = job.getStatus() != null && job.getStatus().condition(ConditionType.Rescaling)
                .map(c -> "True".equals(c.status) && ConditionReason.StartingWorkers.name().equals(c.reason)).orElse(false);
        Savepoint savepoint = applied.savepoint();
        if (!starting || savepoint == null) {
            return null;
        }
        int running = (int) workers.stream().map(StatusProjection.Worker::progress)
                .filter(p -> p != null && p.epoch() == savepoint.epoch() && p.barrier() == null && RUNNING.contains(p.engineState()))
                .count();
        boolean done = running == savepoint.toParallelism() && workers.size() == savepoint.toParallelism();
        return new Rescale(done ? Rescale.Stage.COMPLETED : Rescale.Stage.STARTING, savepoint.fromParallelism(),
                savepoint.toParallelism(), savepoint.epoch(), running, savepoint.lastBatches(), null);
    }

}
