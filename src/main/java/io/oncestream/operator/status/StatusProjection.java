package io.oncestream.operator.status;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionReason;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.StreamJobResources;

/**
 * A StreamJob's status as a pure function of what was observed: the spec check, the worker
 * pods and their {@code /progress}. The workers' answers are folded once ({@link WorkerAggregate});
 * the phase and each condition are then decided from that by the tables below. Conditions keep
 * their {@code lastTransitionTime} unless their status flips, so an unchanged job projects an
 * identical status (and is not patched).
 */
public final class StatusProjection {

    /** One expected worker: its pod (ready or not, or absent) and its progress (null if not reachable). */
    public record Worker(String podName, boolean podExists, boolean podReady, WorkerProgress progress, String unreachable) {
    }

    /** What a condition says: its status ({@code True}, {@code False} or {@code Unknown}), reason and message. */
    private record Verdict(String status, ConditionReason reason, String message) {

        static Verdict of(boolean ok, ConditionReason reason, String message) {
            return new Verdict(ok ? "True" : "False", reason, message);
        }
    }

    /** A condition of a job whose workers run, and what decides it from the workers' aggregate. */
    private record ConditionRule(ConditionType type, Function<WorkerAggregate, Verdict> decide) {
    }

    /** A case of a job whose workers run: when it applies, its phase, and what {@code Ready} says. */
    private record Readiness(Predicate<WorkerAggregate> applies, Phase phase, boolean ready, ConditionReason reason,
            Function<WorkerAggregate, String> message) {

        Verdict verdict(WorkerAggregate workers) {
            return Verdict.of(ready, reason, message.apply(workers));
        }
    }

    /** The phase and {@code Ready} of a job whose workers run: the first case that applies. */
    private static final List<Readiness> READINESS = List.of(
            new Readiness(w -> w.failed() != null, Phase.Failed, false, ConditionReason.WorkerFailed, WorkerAggregate::failed),
            // Done as asked: ready in the sense GitOps tools read (kstatus "Current", Argo CD "Healthy").
            new Readiness(WorkerAggregate::allCompleted, Phase.Completed, true, ConditionReason.Completed,
                    w -> "every worker drained its partitions (availableNow)"),
            // Degraded even for a job that was never up: the worker waits for a person to free
            // space or make the volume writable, not for something that passes by itself.
            new Readiness(w -> w.volume() != null, Phase.Degraded, false, ConditionReason.CheckpointVolumeUnavailable,
                    WorkerAggregate::volume),
            new Readiness(WorkerAggregate::allReady, Phase.Running, true, ConditionReason.WorkersReady,
                    w -> w.ready() + " of " + w.expected() + " workers ready"),
            // Only a job that was up and lost something is Degraded (a Warning); one that has not
            // been up yet since it was created, resumed, rescaled or restarted after a failure is starting.
            new Readiness(WorkerAggregate::wasUp, Phase.Degraded, false, ConditionReason.WorkersDegraded, WorkerAggregate::notReady),
            new Readiness(w -> true, Phase.Pending, false, ConditionReason.WorkersStarting, WorkerAggregate::notReady));

    /** The conditions of a job whose workers run (after {@code ConfigValid}), in the order the status lists them. */
    private static final List<ConditionRule> WORKER_CONDITIONS = List.of(
            new ConditionRule(ConditionType.SinkAvailable, w -> w.reporting() == 0 ? noWorkerReported()
                    : w.sinkDown() == null ? Verdict.of(true, ConditionReason.WritesAcknowledged, "Cassandra acknowledges writes")
                    : Verdict.of(false, ConditionReason.WritesFailing, "retrying writes, nothing is committed meanwhile: " + w.sinkDown())),
            new ConditionRule(ConditionType.SourceAvailable, w -> w.reporting() == 0 ? noWorkerReported()
                    : w.sourceDown() == null ? Verdict.of(true, ConditionReason.KafkaReachable, "Kafka answers")
                    : Verdict.of(false, ConditionReason.KafkaUnreachable, w.sourceDown())),
            new ConditionRule(ConditionType.Ready, w -> readiness(w).verdict(w)),
            new ConditionRule(ConditionType.Progressing, w -> w.failed() == null && w.waiting() != null
                    ? Verdict.of(false, ConditionReason.WorkerWaiting, "a worker waits out a transient failure by itself: " + w.waiting())
                    : w.progressing() ? Verdict.of(true, ConditionReason.BatchesCommitting, "batches are planned and committed")
                    : Verdict.of(false, ConditionReason.NotCommitting, "no batch can commit now")),
            new ConditionRule(ConditionType.Stalled, w -> stalled(w.failed() == null ? null : ConditionReason.WorkerFailed, w.failed())));

    private StatusProjection() {
    }

    /**
     * @param configError null when the spec is valid, else the message naming the field
     * @param workers     one entry per expected worker, in ordinal order (empty while suspended or invalid)
     */
    public static StreamJobStatus project(StreamJob job, StreamJobStatus previous, String configError, List<Worker> workers,
            Instant now) {
        return project(job, previous, configError, null, workers, now);
    }

    /**
     * @param refusal null, or why a valid spec change was not applied (the workers keep the
     *                previous configuration and are projected as usual)
     */
    public static StreamJobStatus project(StreamJob job, StreamJobStatus previous, String configError, String refusal,
            List<Worker> workers, Instant now) {
        return project(job, previous, configError, refusal, workers, now, null, null);
    }

    /**
     * @param epoch   the epoch of the applied configuration, null if none is applied
     * @param rescale the rescale in progress or just completed, else null (a previous
     *                {@code Rescaling} condition is kept as it was)
     */
    public static StreamJobStatus project(StreamJob job, StreamJobStatus previous, String configError, String refusal,
            List<Worker> workers, Instant now, Integer epoch, Rescale rescale) {
        return project(job, previous, configError, refusal, workers, now, epoch, rescale, null);
    }

    /**
     * @param operatorLag the lag the operator read from Kafka itself because no worker reports
     *                    one (every worker gone) or none reaches Kafka, or null; a worker's figure
     *                    wins where there is one from a worker that reaches Kafka
     */
    public static StreamJobStatus project(StreamJob job, StreamJobStatus previous, String configError, String refusal,
            List<Worker> workers, Instant now, Integer epoch, Rescale rescale, WorkerProgress.LagReport operatorLag) {
        StreamJobStatus s = new StreamJobStatus();
        s.observedGeneration = job.getMetadata().getGeneration();
        s.epoch = epoch;
        List<Condition> before = previous == null ? List.of() : previous.conditions;
        condition(s, before, now, ConditionType.ConfigValid, configValid(configError, refusal));
        if (configError != null) {
            invalid(s, before, now, configError);
        } else if (Boolean.TRUE.equals(job.getSpec().suspend) && refusal == null) {
            suspended(s, previous, before, now);
        } else {
            WorkerAggregate aggregate = WorkerAggregate.of(workers, previous);
            figures(s, aggregate, previous, operatorLag);
            s.phase = readiness(aggregate).phase();
            WORKER_CONDITIONS.forEach(rule -> condition(s, before, now, rule.type(), rule.decide().apply(aggregate)));
        }
        if (configError == null) {
            s.replicas = workers.size();
            s.selector = selector(job);
        }
        rescaling(s, before, now, rescale);
        return s;
    }

    /** {@code ConfigValid}: the spec maps to a worker configuration, unless it does not or a change of it was refused. */
    private static Verdict configValid(String configError, String refusal) {
        if (refusal != null && configError == null) {
            return Verdict.of(false, ConditionReason.ChangeRefused, refusal);
        }
        return configError == null ? Verdict.of(true, ConditionReason.SpecValid, "the spec compiles and maps to a worker configuration")
                : Verdict.of(false, ConditionReason.InvalidSpec, configError);
    }

    private static void invalid(StreamJobStatus s, List<Condition> before, Instant now, String configError) {
        s.phase = Phase.Failed;
        condition(s, before, now, ConditionType.Ready, false, ConditionReason.InvalidSpec, "no workers run for an invalid spec: " + configError);
        condition(s, before, now, ConditionType.Stalled, stalled(ConditionReason.InvalidSpec, configError));
    }

    private static void suspended(StreamJobStatus s, StreamJobStatus previous, List<Condition> before, Instant now) {
        s.phase = Phase.Suspended;
        condition(s, before, now, ConditionType.Ready, false, ConditionReason.Suspended, "spec.suspend is true; checkpoints are kept");
        condition(s, before, now, ConditionType.Stalled, stalled(null, null));
        if (previous != null) {
            s.batchId = previous.batchId;
            s.committedOffsets = previous.committedOffsets;
            s.totals = previous.totals;
        }
    }

    /** The job's figures from its workers: each worker's line, the batch, offsets, lag, totals and rates. */
    private static void figures(StreamJobStatus s, WorkerAggregate workers, StreamJobStatus previous,
            WorkerProgress.LagReport operatorLag) {
        s.workers = workers.statuses();
        s.batchId = workers.batchId(previous);
        JobLag jobLag = new JobLag(workers.reports(), operatorLag);
        s.committedOffsets = workers.committedOffsets(jobLag.fromGroup());
        if (!jobLag.isEmpty()) {
            s.lag = jobLag.records();
            s.lagSeconds = jobLag.seconds();
            s.partitionLag = jobLag.byPartition();
        }
        s.totals = workers.totals(previous);
        s.rates = workers.rates();
    }

    private static Readiness readiness(WorkerAggregate workers) {
        return READINESS.stream().filter(r -> r.applies().test(workers)).findFirst().orElseThrow();
    }

    /** Nobody has tried Cassandra or Kafka yet: neither available nor not. */
    private static Verdict noWorkerReported() {
        return new Verdict("Unknown", ConditionReason.NoWorkerReported, "no worker has reported yet");
    }

    /**
     * {@code Rescaling}, while a rescale runs and when it completed: a running one also makes the
     * phase Rescaling (unless Failed) and {@code Progressing} False. Without a rescale, a previous
     * {@code Rescaling} condition is kept as it was.
     */
    private static void rescaling(StreamJobStatus s, List<Condition> before, Instant now, Rescale rescale) {
        if (rescale == null) {
            before.stream().filter(c -> ConditionType.Rescaling.name().equals(c.type)).findFirst().ifPresent(s.conditions::add);
            return;
        }
        boolean running = rescale.stage() != Rescale.Stage.COMPLETED;
        ConditionReason reason = switch (rescale.stage()) {
            case BARRIER -> ConditionReason.StoppingAtBarrier;
            case STARTING -> ConditionReason.StartingWorkers;
            case COMPLETED -> ConditionReason.RescaleCompleted;
        };
        condition(s, before, now, ConditionType.Rescaling, running, reason, rescale.message());
        if (running && s.phase != Phase.Failed) {
            s.phase = Phase.Rescaling;
            s.conditions.removeIf(c -> c.type.equals(ConditionType.Progressing.name()));
            condition(s, before, now, ConditionType.Progressing, false, reason,
                    "no batch is planned while the job rescales: " + rescale.message());
        }
    }

    /** The label selector of the job's worker pods, as the scale subresource reports it. */
    private static String selector(StreamJob job) {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(StreamJobResources.selectorLabels(job.getMetadata().getName()))
                .forEach((k, v) -> out.append(out.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return out.toString();
    }

    /**
     * What a worker whose checkpoint volume takes no writes needs from a person, naming the pod,
     * its PVC and what the worker reported (the file and the system's reason).
     */
    static String volumeUnavailable(String pod, String lastError) {
        return pod + " cannot write its checkpoint volume (PVC " + StreamJobResources.checkpointClaimName(pod) + "): "
                + lastError + "; no batch runs until it can: free space on the volume or grow the PVC, or make it writable,"
                + " and the worker goes on by itself";
    }

    /**
     * {@code Stalled}: True when the job cannot get anywhere without a change of its spec (an
     * invalid spec, a failed worker), the condition kstatus (Flux, kpt, cli-utils) reads as
     * "Failed"; False otherwise.
     */
    private static Verdict stalled(ConditionReason reason, String message) {
        return Verdict.of(reason != null, reason == null ? ConditionReason.NotStalled : reason,
                reason == null ? "nothing needs a change of the spec" : message);
    }

    /**
     * The status after a reconcile that failed (the API server refused a write, say): what the
     * previous status said about the workers, with {@code Ready=False}, reason
     * {@code ReconcileFailed} and the failure; {@code observedGeneration} is not advanced. The
     * next reconcile that succeeds projects the status afresh.
     */
    public static StreamJobStatus reconcileFailed(StreamJobStatus previous, String failure, Instant now) {
        StreamJobStatus s = previous == null ? new StreamJobStatus() : StatusChanges.copy(previous);
        List<Condition> before = previous == null ? List.of() : previous.conditions;
        if (s.phase == null) {
            s.phase = Phase.Pending;
        }
        List<Condition> others = new ArrayList<>(before.stream().filter(c -> !c.type.equals(ConditionType.Ready.name())).toList());
        s.conditions = new ArrayList<>();
        condition(s, before, now, ConditionType.Ready, false, ConditionReason.ReconcileFailed, "the operator could not apply the job (retrying): " + failure);
        s.conditions.addAll(others);
        return s;
    }

    private static void condition(StreamJobStatus s, List<Condition> before, Instant now, ConditionType type, boolean ok,
            ConditionReason reason, String message) {
        condition(s, before, now, type, Verdict.of(ok, reason, message));
    }

    /** Adds the condition, keeping the previous lastTransitionTime unless the status flipped. */
    private static void condition(StreamJobStatus s, List<Condition> before, Instant now, ConditionType type, Verdict verdict) {
        Condition c = new Condition();
        c.type = type.name();
        c.status = verdict.status();
        c.reason = verdict.reason().name();
        c.message = verdict.message();
        c.observedGeneration = s.observedGeneration;
        c.lastTransitionTime = before.stream().filter(b -> c.type.equals(b.type) && c.status.equals(b.status))
                .map(b -> b.lastTransitionTime).findFirst().orElse(now.toString());
        s.conditions.add(c);
    }
}
