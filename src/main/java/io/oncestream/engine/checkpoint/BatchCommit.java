package io.oncestream.engine.checkpoint;

import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.RecordTotals;

/**
 * An entry of the commit log ({@code commits/<N>}): written only after every row of batch N
 * was acknowledged by Cassandra.
 *
 * @param recordsRead     records read from Kafka
 * @param recordsFiltered records the filter dropped
 * @param rowsWritten     rows written to the sink table
 * @param deadLettered    records written to the dead-letter table
 * @param durationMs      time from planning to commit
 * @param lastTimestamps  last write timestamp (microseconds) per partition, the next batch's base
 * @param committedAtMs   wall-clock time of the commit
 * @param totals          the checkpoint's counts since the job started, this batch included; null
 *                        in commits written before the field existed
 */
public record BatchCommit(long recordsRead, long recordsFiltered, long rowsWritten, long deadLettered,
        long durationMs, Map<String, Long> lastTimestamps, long committedAtMs, @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) RecordTotals totals) {

    public BatchCommit {
        lastTimestamps = new TreeMap<>(lastTimestamps);
    }

    /** A commit without totals, as builds before them wrote. */
    public BatchCommit(long recordsRead, long recordsFiltered, long rowsWritten, long deadLettered,
            long durationMs, Map<String, Long> lastTimestamps, long committedAtMs) {
        this(recordsRead, recordsFiltered, rowsWritten, deadLettered, durationMs, lastTimestamps, committedAtMs, null);
    }

    /** The counts of this batch alone. */
    public RecordTotals counts() {
        return new RecordTotals(recordsRead, recordsFiltered, rowsWritten, deadLettered);
    }

    /**
     * The seal of a checkpoint whose last committed batch, {@code batchId}, is this commit with
     * {@code offsets}: where the batch left each partition's chain, and the totals.
     */
    public CheckpointSeal seal(int nextEpoch, long batchId, BatchOffsets offsets, long nowMs) {
        return new CheckpointSeal(nextEpoch, batchId, offsets.chainAfter(lastTimestamps), nowMs, totals);
    }
}
