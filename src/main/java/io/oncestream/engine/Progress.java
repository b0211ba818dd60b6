package io.oncestream.engine;

import java.util.Map;

import io.oncestream.engine.checkpoint.CheckpointSeal;

/**
 * A worker's progress, served as JSON at {@code GET /progress} (in the spirit of Spark's
 * {@code StreamingQueryProgress}); the operator aggregates it into the StreamJob status.
 *
 * @param jobId           the job
 * @param workerIndex     this worker's index
 * @param parallelism     number of workers of the job
 * @param state           what the engine is doing now
 * @param batchId         last committed batch, -1 before the first commit
 * @param runningBatchId  the batch being run, or null
 * @param partitions      per {@code topic-partition}: committed end, latest offset seen, and the running range
 * @param totals          counts since the worker started
 * @param lastBatch       figures of the last committed batch, or null
 * @param sinkAvailable   false while writes fail and are being retried
 * @param sourceAvailable false while Kafka cannot be reached
 * @param lastError       the most recent error, or null
 * @param updatedAt       ISO-8601 time of this snapshot
 * @param epoch           the epoch the worker runs in (0 until the job's first rescale)
 * @param barrier         the seal of the checkpoint once the worker stopped at a barrier, else null
 */
public record Progress(
        String jobId,
        int workerIndex,
        int parallelism,
        EngineState state,
        long batchId,
        Long runningBatchId,
        Map<String, PartitionProgress> partitions,
        Totals totals,
        BatchFigures lastBatch,
        boolean sinkAvailable,
        boolean sourceAvailable,
        String lastError,
        String updatedAt,
        int epoch,
        CheckpointSeal barrier) {

    /**
     * @param committed offset after the last committed record
     * @param latest    latest (last stable) offset when last planned
     * @param start     running batch's first offset, or null
     * @param end       running batch's end offset, or null
     */
    public record PartitionProgress(long committed, long latest, Long start, Long end) {
    }

    /** Counts since the worker started. */
    public record Totals(long read, long filteredOut, long written, long deadLettered, long lostRecords, long batches) {
    }

    /** Figures of one committed batch; durations in milliseconds. */
    public record BatchFigures(long batchId, boolean replayed, long read, long filteredOut, long written, long deadLettered,
            Map<String, Long> durationsMs, double inputRecordsPerSecond, double writtenRowsPerSecond) {
    }
}
