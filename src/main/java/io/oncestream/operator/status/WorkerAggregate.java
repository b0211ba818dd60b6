package io.oncestream.operator.status;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.TopicPartitionKey;

/**
 * What a job's workers said, folded once, worker by worker in ordinal order: how many exist,
 * answer, are ready, have completed or are still reading their checkpoint after a restart; the
 * first of them that failed, cannot write, cannot read, waits out a transient failure or cannot
 * use its volume; and their figures (batches, committed offsets, totals, rates). The conditions
 * and the phase of the status are decided from it ({@link StatusProjection}).
 */
final class WorkerAggregate {

    /**
     * Worker states of a transient failure the worker waits out by itself (its checkpoint's lock
     * held or its volume unusable, or its engine starting again): the job is not progressing,
     * and nobody needs to act yet.
     */
    private static final Set<EngineState> WAITING_STATES = EnumSet.of(EngineState.WAITING_FOR_CHECKPOINT_LOCK,
            EngineState.WAITING_FOR_CHECKPOINT, EngineState.RETRYING);

    /** The worker state of a checkpoint volume that takes no writes (full, read-only, I/O errors). */
    private static final EngineState CHECKPOINT_VOLUME_STATE = EngineState.WAITING_FOR_CHECKPOINT;

    private final int expected;
    private final boolean wasUp;
    private final List<StreamJobStatus.WorkerStatus> statuses = new ArrayList<>();
    private final List<WorkerProgress> reports = new ArrayList<>();
    private final Map<String, Map<String, Long>> committed = new TreeMap<>();
    private final StreamJobStatus.Totals totals = new StreamJobStatus.Totals();
    private long minBatch = Long.MAX_VALUE;
    private int reporting;
    private int recovering;
    private int ready;
    private int completed;
    private String failed;
    private String sinkDown;
    private String sourceDown;
    private String waiting;
    private String volume;
    private double input;
    private double written;
    private double batchSpeed;
    private Double incoming;
    private Integer window;

    private WorkerAggregate(int expected, StreamJobStatus previous) {
        this.expected = expected;
        // Only a job that was up and lost something is Degraded (a Warning); one that has not
        // been up yet since it was created, resumed, rescaled or restarted after a failure is starting.
        this.wasUp = previous != null && (previous.phase == Phase.Running || previous.phase == Phase.Degraded);
        totals.read = 0L;
        totals.filteredOut = 0L;
        totals.written = 0L;
        totals.deadLettered = 0L;
    }

    /** The workers' answers, one per expected worker in ordinal order, folded against the previous status. */
    static WorkerAggregate of(List<StatusProjection.Worker> workers, StreamJobStatus previous) {
        WorkerAggregate a = new WorkerAggregate(workers.size(), previous);
        workers.forEach(w -> a.add(w, previous));
        return a;
    }

    private void add(StatusProjection.Worker w, StreamJobStatus previous) {
        StreamJobStatus.WorkerStatus ws = new StreamJobStatus.WorkerStatus();
        statuses.add(ws);
        ws.name = w.podName();
        ws.ready = w.podReady();
        if (w.podReady()) {
            ready++;
        }
        WorkerProgress p = w.progress();
        if (p == null) {
            ws.state = w.podExists() ? "Unreachable" : "NoPod";
            ws.lastError = w.unreachable();
            return;
        }
        reporting++;
        reports.add(p);
        ws.state = p.state();
        ws.lastError = p.lastError();
        ws.partitions = p.partitions() == null ? List.of() : new ArrayList<>(p.partitions().keySet());
        if (p.is(EngineState.STARTING) && p.batchId() < 0) {
            // Not yet read its checkpoint: what it reported before it restarted still holds.
            recovering++;
            ws.batchId = previousWorker(previous, w.podName()).map(pw -> pw.batchId).orElse(null);
        } else {
            ws.batchId = p.batchId();
            minBatch = Math.min(minBatch, p.batchId());
        }
        addFigures(p);
        addTroubles(w.podName(), p);
    }

    private void addFigures(WorkerProgress p) {
        if (p.partitions() != null) {
            p.partitions().forEach((key, partition) -> {
                TopicPartitionKey tp = TopicPartitionKey.parse(key);
                committed.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).put(String.valueOf(tp.partition()), partition.committed());
            });
        }
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
    }

    /** The first worker with each kind of trouble is the one the conditions name. */
    private void addTroubles(String pod, WorkerProgress p) {
        if (p.is(EngineState.FAILED) && failed == null) {
            failed = pod + ": " + p.lastError();
        }
        if (p.is(EngineState.COMPLETED)) {
            completed++;
        }
        if (p.is(CHECKPOINT_VOLUME_STATE) && volume == null) {
            volume = StatusProjection.volumeUnavailable(pod, p.lastError());
        }
        if (WAITING_STATES.contains(p.engineState()) && waiting == null) {
            waiting = pod + " " + p.state() + ": " + p.lastError();
        }
        if (!p.sinkAvailable() && sinkDown == null) {
            sinkDown = pod + ": " + p.lastError();
        }
        if (!p.sourceAvailable() && sourceDown == null) {
            sourceDown = pod + ": " + p.lastError();
        }
    }

    private static Optional<StreamJobStatus.WorkerStatus> previousWorker(StreamJobStatus previous, String pod) {
        return previous == null || previous.workers == null ? Optional.empty()
                : previous.workers.stream().filter(w -> pod.equals(w.name)).findFirst();
    }

    /** Each worker's line of the status, in ordinal order. */
    List<StreamJobStatus.WorkerStatus> statuses() {
        return statuses;
    }

    /** The answers of the workers that answered. */
    List<WorkerProgress> reports() {
        return reports;
    }

    int expected() {
        return expected;
    }

    int reporting() {
        return reporting;
    }

    int ready() {
        return ready;
    }

    /** Whether the job was Running or Degraded before: then losing something degrades it, else it is still starting. */
    boolean wasUp() {
        return wasUp;
    }

    boolean allReporting() {
        return expected > 0 && reporting == expected;
    }

    /** Every worker drained its partitions ({@code availableNow}). */
    boolean allCompleted() {
        return allReporting() && completed == expected;
    }

    /** Every worker answers, is ready, and reaches Cassandra and Kafka. */
    boolean allReady() {
        return allReporting() && ready == expected && sinkDown == null && sourceDown == null;
    }

    /** Whether batches can be planned and committed now: someone answers and nobody is in trouble. */
    boolean progressing() {
        return failed == null && sinkDown == null && sourceDown == null && waiting == null && reporting > 0;
    }

    /** The first failed worker and its error, or null. */
    String failed() {
        return failed;
    }

    /** The first worker whose writes fail, and why, or null. */
    String sinkDown() {
        return sinkDown;
    }

    /** The first worker that cannot reach Kafka, and why, or null. */
    String sourceDown() {
        return sourceDown;
    }

    /** The first worker that waits out a transient failure, its state and why, or null. */
    String waiting() {
        return waiting;
    }

    /** What the first worker that cannot write its checkpoint volume needs from a person, or null. */
    String volume() {
        return volume;
    }

    /** How many are ready and reporting, and what is down: why the job is not ready. */
    String notReady() {
        return ready + " of " + expected + " workers ready, " + reporting + " reporting progress"
                + (sinkDown != null ? "; Cassandra refuses writes" : "") + (sourceDown != null ? "; Kafka does not answer" : "");
    }

    /** The job's batch: the lowest any worker committed, once all answer and none is still reading its checkpoint. */
    Long batchId(StreamJobStatus previous) {
        return allReporting() && recovering == 0 ? Long.valueOf(minBatch) : previous == null ? null : previous.batchId;
    }

    /**
     * Each topic's committed offsets by partition: the workers' own, and for partitions no worker
     * reports, {@code fromGroup} (the job's consumer group); null if there are none.
     */
    Map<String, Map<String, Long>> committedOffsets(Map<String, Long> fromGroup) {
        fromGroup.forEach((key, offset) -> {
            TopicPartitionKey tp = TopicPartitionKey.parse(key);
            committed.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).putIfAbsent(String.valueOf(tp.partition()), offset);
        });
        return committed.isEmpty() ? null : committed;
    }

    /**
     * The job's totals (from the checkpoints): while a worker has not read its checkpoint yet, the
     * last complete figures stand; null while nobody answers.
     */
    StreamJobStatus.Totals totals(StreamJobStatus previous) {
        return recovering > 0 && previous != null && previous.totals != null ? previous.totals : reporting > 0 ? totals : null;
    }

    /** The job's rates, summed over its workers (the incoming rate is the widest view); null while nobody answers. */
    StreamJobStatus.Rates rates() {
        if (reporting == 0) {
            return null;
        }
        StreamJobStatus.Rates rates = new StreamJobStatus.Rates();
        rates.windowSeconds = window;
        rates.inputRecordsPerSecond = window == null ? null : Math.round(input);
        rates.writtenRowsPerSecond = window == null ? null : Math.round(written);
        rates.incomingRecordsPerSecond = incoming == null ? null : Math.round(incoming);
        rates.batchRecordsPerSecond = Math.round(batchSpeed);
        return rates;
    }
}
