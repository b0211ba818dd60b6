package io.oncestream.engine;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.engine.checkpoint.CheckpointSeal;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;

/** Collects the engine's progress; {@link #snapshot()} is safe to call from the HTTP thread. */
public final class ProgressTracker {

    private final String jobId;
    private final int workerIndex;
    private final int parallelism;
    private EngineState state = EngineState.STARTING;
    private long batchId = -1;
    private Long runningBatchId;
    private final Map<String, Long> committed = new TreeMap<>();
    private final Map<String, Long> latest = new TreeMap<>();
    private Map<String, PartitionRange> running = Map.of();
    private long read;
    private long filteredOut;
    private long written;
    private long deadLettered;
    private long lostRecords;
    private long batches;
    private Progress.BatchFigures lastBatch;
    private boolean sinkAvailable = true;
    private boolean sourceAvailable = true;
    private String lastError;
    private int epoch;
    private CheckpointSeal seal;

    public ProgressTracker(String jobId, int workerIndex, int parallelism) {
        this.jobId = jobId;
        this.workerIndex = workerIndex;
        this.parallelism = parallelism;
    }

    public synchronized void state(EngineState newState) {
        this.state = newState;
    }

    public synchronized EngineState state() {
        return state;
    }

    synchronized void recovered(long lastCommitted, Map<String, PartitionRange> committedRanges) {
        this.batchId = lastCommitted;
        committedRanges.forEach((p, r) -> committed.put(p, r.end()));
    }

    synchronized void planned(Map<String, KafkaOffsets> kafka) {
        kafka.forEach((p, o) -> latest.put(p, o.latest()));
        sourceAvailable = true;
    }

    synchronized void running(long id, Map<String, PartitionRange> ranges) {
        runningBatchId = id;
        running = Map.copyOf(ranges);
    }

    synchronized void committed(Progress.BatchFigures figures, Map<String, PartitionRange> ranges, long lost) {
        batchId = figures.batchId();
        runningBatchId = null;
        running = Map.of();
        ranges.forEach((p, r) -> committed.put(p, r.end()));
        read += figures.read();
        filteredOut += figures.filteredOut();
        written += figures.written();
        deadLettered += figures.deadLettered();
        lostRecords += lost;
        batches++;
        lastBatch = figures;
    }

    public synchronized void sinkAvailable(boolean available) {
        sinkAvailable = available;
    }

    public synchronized void sourceAvailable(boolean available) {
        sourceAvailable = available;
    }

    /** The epoch this worker runs in. */
    public synchronized void epoch(int number) {
        epoch = number;
    }

    /** The checkpoint is sealed at a barrier: reported until the worker is replaced. */
    public synchronized void sealed(CheckpointSeal sealed) {
        seal = sealed;
        state = EngineState.AT_BARRIER;
        runningBatchId = null;
        running = Map.of();
        if (sealed.batchId() >= 0) {
            batchId = Math.max(batchId, sealed.batchId());
            sealed.partitions().forEach((p, point) -> committed.put(p, point.offset()));
        }
    }

    public synchronized void error(String message) {
        lastError = message;
    }

    public synchronized Progress snapshot() {
        Map<String, Progress.PartitionProgress> partitions = new TreeMap<>();
        java.util.Set<String> keys = new java.util.TreeSet<>(latest.keySet());
        keys.addAll(committed.keySet());
        for (String p : keys) {
            PartitionRange r = running.get(p);
            partitions.put(p, new Progress.PartitionProgress(committed.getOrDefault(p, 0L), latest.getOrDefault(p, 0L),
                    r == null ? null : r.start(), r == null ? null : r.end()));
        }
        return new Progress(jobId, workerIndex, parallelism, state, batchId, runningBatchId, partitions,
                new Progress.Totals(read, filteredOut, written, deadLettered, lostRecords, batches), lastBatch,
                sinkAvailable, sourceAvailable, lastError, Instant.now().toString(), epoch, seal);
    }
}
