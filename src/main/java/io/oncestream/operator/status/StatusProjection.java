package io.oncestream.operator.status;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionReason;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.StreamJobResources;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.TopicPartitionKey;

/**
 * A StreamJob's status as a pure function of what was observed: the spec check, the worker
 * pods and their {@code /progress}. Conditions keep their {@code lastTransitionTime} unless
 * their status flips, so an unchanged job projects an identical status (and is not patched).
 */
public final class StatusProjection {

    /**
     * Worker states of a transient failure the worker waits out by itself (its checkpoint's lock
     * held or its volume unusable, or its engine starting again): the job is not progressing,
     * and nobody needs to act yet.
     */
    private static final java.util.Set<EngineState> WAITING_STATES = java.util.EnumSet.of(EngineState.WAITING_FOR_CHECKPOINT_LOCK,
            EngineState.WAITING_FOR_CHECKPOINT, EngineState.RETRYING);

    /** The worker state of a checkpoint volume that takes no writes (full, read-only, I/O errors). */
    private static final EngineState CHECKPOINT_VOLUME_STATE = EngineState.WAITING_FOR_CHECKPOINT;

    /** One expected worker: its pod (ready or not, or absent) and its progress (null if not reachable). */
    public record Worker(String podName, boolean podExists, boolean podReady, WorkerProgress progress, String unreachable) {
    }

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
        StreamJobStatus s = projectWorkers(job, previous, configError, refusal, workers, now, operatorLag);
        s.epoch = epoch;
        if (configError == null) {
            s.replicas = workers.size();
            s.selector = selector(job);
        }
        List<Condition> before = previous == null ? List.of() : previous.conditions;
        if (rescale != null) {
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
        } else {
            before.stream().filter(c -> ConditionType.Rescaling.name().equals(c.type)).findFirst().ifPresent(s.conditions::add);
        }
        return s;
    }

    private static java.util.Optional<StreamJobStatus.WorkerStatus> previousWorker(StreamJobStatus previous, String pod) {
        return previous == null || previous.workers == null ? java.util.Optional.empty()
                : previous.workers.stream().filter(w -> pod.equals(w.name)).findFirst();
    }

    /** The label selector of the job's worker pods, as the scale subresource reports it. */
    private static String selector(StreamJob job) {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(io.oncestream.api.StreamJobResources.selectorLabels(job.getMetadata().getName()))
                .forEach((k, v) -> out.append(out.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return out.toString();
    }

    private static StreamJobStatus projectWorkers(StreamJob job, StreamJobStatus previous, String configError, String refusal,
            List<Worker> workers, Instant now, WorkerProgress.LagReport operatorLag) {
        StreamJobStatus s = new StreamJobStatus();
        s.observedGeneration = job.getMetadata().getGeneration();
        List<Condition> before = previous == null ? List.of() : previous.conditions;
        boolean suspended = Boolean.TRUE.equals(job.getSpec().suspend);

        if (refusal != null && configError == null) {
            condition(s, before, now, ConditionType.ConfigValid, false, ConditionReason.ChangeRefused, refusal);
        } else {
            condition(s, before, now, ConditionType.ConfigValid, configError == null, configError == null ? ConditionReason.SpecValid : ConditionReason.InvalidSpec,
                    configError == null ? "the spec compiles and maps to a worker configuration" : configError);
        }
        if (configError != null) {
            s.phase = Phase.Failed;
            condition(s, before, now, ConditionType.Ready, false, ConditionReason.InvalidSpec, "no workers run for an invalid spec: " + configError);
            stalled(s, before, now, ConditionReason.InvalidSpec, configError);
            return s;
        }
        if (suspended && refusal == null) {
            s.phase = Phase.Suspended;
            condition(s, before, now, ConditionType.Ready, false, ConditionReason.Suspended, "spec.suspend is true; checkpoints are kept");
            stalled(s, before, now, null, null);
            keepTotals(s, previous);
            return s;
        }

        List<StreamJobStatus.WorkerStatus> statuses = new ArrayList<>();
        Map<String, Map<String, Long>> committed = new TreeMap<>();
        long minBatch = Long.MAX_VALUE;
        int reporting = 0;
        int recovering = 0;
        int ready = 0;
        int completed = 0;
        String failed = null;
        String sinkDown = null;
        String sourceDown = null;
        String waiting = null;
        String volume = null;
        StreamJobStatus.Totals totals = new StreamJobStatus.Totals();
        totals.read = 0L;
        totals.filteredOut = 0L;
        totals.written = 0L;
        totals.deadLettered = 0L;
        List<WorkerProgress> reports = new ArrayList<>();
        double input = 0;
        double written = 0;
        double batchSpeed = 0;
        Double incoming = null;
        Integer window = null;
        for (Worker w : workers) {
            StreamJobStatus.WorkerStatus ws = new StreamJobStatus.WorkerStatus();
            ws.name = w.podName();
            ws.ready = w.podReady();
            if (w.podReady()) {
                ready++;
            }
            WorkerProgress p = w.progress();
            if (p == null) {
                ws.state = w.podExists() ? "Unreachable" : "NoPod";
                ws.lastError = w.unreachable();
                statuses.add(ws);
                continue;
            }
            reporting++;
            ws.state = p.state();
            boolean starting = p.is(EngineState.STARTING) && p.batchId() < 0;
            if (starting) {
                // Not yet read its checkpoint: what it reported before it restarted still holds.
                recovering++;
                ws.batchId = previousWorker(previous, w.podName()).map(pw -> pw.batchId).orElse(null);
            } else {
                ws.batchId = p.batchId();
            }
            ws.lastError = p.lastError();
            ws.partitions = p.partitions() == null ? List.of() : new ArrayList<>(p.partitions().keySet());
            if (!starting) {
                minBatch = Math.min(minBatch, p.batchId());
            }
            if (p.partitions() != null) {
                for (Map.Entry<String, WorkerProgress.Partition> e : p.partitions().entrySet()) {
                    TopicPartitionKey key = TopicPartitionKey.parse(e.getKey());
                    committed.computeIfAbsent(key.topic(), t -> new TreeMap<>())
                            .put(String.valueOf(key.partition()), e.getValue().committed());
                }
            }
            reports.add(p);
            if (p.totals() != null) {
                totals.read += p.totals().read();
                totals.filteredOut += p.totals().filteredOut();
                totals.written += p.totals().written();
                totals.deadLettered += p.totals().deadLettered();
            }
            if (p.lastBatch() != null) {
                batchSpeed += p.lastBatch().inputRecordsPerSecond();
            }
            if (p.rates() != null) {
                window = p.rates().windowSeconds();
                input += p.rates().inputRecordsPerSecond() == null ? 0 : p.rates().inputRecordsPerSecond();
                written += p.rates().writtenRowsPerSecond() == null ? 0 : p.rates().writtenRowsPerSecond();
                if (p.rates().incomingRecordsPerSecond() != null) {
                    // Every worker reads the whole job's end offsets: the widest view counts, not a sum.
                    incoming = incoming == null ? p.rates().incomingRecordsPerSecond() : Math.max(incoming, p.rates().incomingRecordsPerSecond());
                }
            }
            if (p.is(EngineState.FAILED) && failed == null) {
                failed = w.podName() + ": " + p.lastError();
            }
            if (p.is(EngineState.COMPLETED)) {
                completed++;
            }
            if (p.is(CHECKPOINT_VOLUME_STATE) && volume == null) {
                volume = volumeUnavailable(w.podName(), p.lastError());
            }
            if (WAITING_STATES.contains(p.engineState()) && waiting == null) {
                waiting = w.podName() + " " + p.state() + ": " + p.lastError();
            }
            if (!p.sinkAvailable() && sinkDown == null) {
                sinkDown = w.podName() + ": " + p.lastError();
            }
            if (!p.sourceAvailable() && sourceDown == null) {
                sourceDown = w.podName() + ": " + p.lastError();
            }
            statuses.add(ws);
        }
        boolean allReporting = !workers.isEmpty() && reporting == workers.size();
        s.workers = statuses;
        s.batchId = allReporting && recovering == 0 ? Long.valueOf(minBatch) : previous == null ? null : previous.batchId;
        JobLag jobLag = new JobLag(reports, operatorLag);
        jobLag.fromGroup().forEach((key, offset) -> {
            TopicPartitionKey tp = TopicPartitionKey.parse(key);
            committed.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).putIfAbsent(String.valueOf(tp.partition()), offset);
        });
        s.committedOffsets = committed.isEmpty() ? null : committed;
        if (!jobLag.isEmpty()) {
            s.lag = jobLag.records();
            s.lagSeconds = jobLag.seconds();
            s.partitionLag = jobLag.byPartition();
        }
        // Totals are the job's (from the checkpoints): while a worker has not read its checkpoint
        // yet, the last complete figures stand.
        s.totals = recovering > 0 && previous != null && previous.totals != null ? previous.totals : reporting > 0 ? totals : null;
        if (reporting > 0) {
            StreamJobStatus.Rates rates = new StreamJobStatus.Rates();
            rates.windowSeconds = window;
            rates.inputRecordsPerSecond = window == null ? null : Math.round(input);
            rates.writtenRowsPerSecond = window == null ? null : Math.round(written);
            rates.incomingRecordsPerSecond = incoming == null ? null : Math.round(incoming);
            rates.batchRecordsPerSecond = Math.round(batchSpeed);
            s.rates = rates;
        }

        if (reporting == 0) {
            // Nobody has tried Cassandra or Kafka yet: neither available nor not.
            condition(s, before, now, ConditionType.SinkAvailable, "Unknown", ConditionReason.NoWorkerReported, "no worker has reported yet");
            condition(s, before, now, ConditionType.SourceAvailable, "Unknown", ConditionReason.NoWorkerReported, "no worker has reported yet");
        } else {
            condition(s, before, now, ConditionType.SinkAvailable, sinkDown == null, sinkDown == null ? ConditionReason.WritesAcknowledged : ConditionReason.WritesFailing,
                    sinkDown == null ? "Cassandra acknowledges writes" : "retrying writes, nothing is committed meanwhile: " + sinkDown);
            condition(s, before, now, ConditionType.SourceAvailable, sourceDown == null, sourceDown == null ? ConditionReason.KafkaReachable : ConditionReason.KafkaUnreachable,
                    sourceDown == null ? "Kafka answers" : sourceDown);
        }
        if (failed != null) {
            s.phase = Phase.Failed;
            condition(s, before, now, ConditionType.Ready, false, ConditionReason.WorkerFailed, failed);
        } else if (allReporting && completed == workers.size()) {
            // Done as asked: ready in the sense GitOps tools read (kstatus "Current", Argo CD "Healthy").
            s.phase = Phase.Completed;
            condition(s, before, now, ConditionType.Ready, true, ConditionReason.Completed, "every worker drained its partitions (availableNow)");
        } else if (volume != null) {
            // Degraded even for a job that was never up: the worker waits for a person to free
            // space or make the volume writable, not for something that passes by itself.
            s.phase = Phase.Degraded;
            condition(s, before, now, ConditionType.Ready, false, ConditionReason.CheckpointVolumeUnavailable, volume);
        } else if (allReporting && ready == workers.size() && sinkDown == null && sourceDown == null) {
            s.phase = Phase.Running;
            condition(s, before, now, ConditionType.Ready, true, ConditionReason.WorkersReady, ready + " of " + workers.size() + " workers ready");
        } else {
            // Only a job that was up and lost something is Degraded (a Warning); one that has not
            // been up yet since it was created, resumed, rescaled or restarted after a failure is starting.
            boolean wasUp = previous != null && (previous.phase == Phase.Running || previous.phase == Phase.Degraded);
            String why = ready + " of " + workers.size() + " workers ready, " + reporting + " reporting progress"
                    + (sinkDown != null ? "; Cassandra refuses writes" : "") + (sourceDown != null ? "; Kafka does not answer" : "");
            s.phase = wasUp ? Phase.Degraded : Phase.Pending;
            condition(s, before, now, ConditionType.Ready, false, wasUp ? ConditionReason.WorkersDegraded : ConditionReason.WorkersStarting, why);
        }
        boolean progressing = failed == null && sinkDown == null && sourceDown == null && waiting == null && reporting > 0;
        if (failed == null && waiting != null) {
            condition(s, before, now, ConditionType.Progressing, false, ConditionReason.WorkerWaiting,
                    "a worker waits out a transient failure by itself: " + waiting);
        } else {
            condition(s, before, now, ConditionType.Progressing, progressing,
                    progressing ? ConditionReason.BatchesCommitting : ConditionReason.NotCommitting,
                    progressing ? "batches are planned and committed" : "no batch can commit now");
        }
        stalled(s, before, now, failed == null ? null : ConditionReason.WorkerFailed, failed);
        return s;
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
    private static void stalled(StreamJobStatus s, List<Condition> before, Instant now, ConditionReason reason, String message) {
        condition(s, before, now, ConditionType.Stalled, reason != null, reason == null ? ConditionReason.NotStalled : reason,
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

    private static void keepTotals(StreamJobStatus s, StreamJobStatus previous) {
        if (previous != null) {
            s.batchId = previous.batchId;
            s.committedOffsets = previous.committedOffsets;
            s.totals = previous.totals;
        }
    }

    /** Adds the condition, keeping the previous lastTransitionTime unless the status flipped. */
    private static void condition(StreamJobStatus s, List<Condition> before, Instant now, ConditionType type, boolean ok,
            ConditionReason reason, String message) {
        condition(s, before, now, type, ok ? "True" : "False", reason, message);
    }

    private static void condition(StreamJobStatus s, List<Condition> before, Instant now, ConditionType type, String status,
            ConditionReason reason, String message) {
        Condition c = new Condition();
        c.type = type.name();
        c.status = status;
        c.reason = reason.name();
        c.message = message;
        c.observedGeneration = s.observedGeneration;
        c.lastTransitionTime = before.stream().filter(b -> c.type.equals(b.type) && c.status.equals(b.status))
                .map(b -> b.lastTransitionTime).findFirst().orElse(now.toString());
        s.conditions.add(c);
    }
}
