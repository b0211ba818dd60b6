package io.oncestream.engine.checkpoint;

import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.ChainPoint;

/**
 * An entry of the offset write-ahead log ({@code offsets/<N>}): the exact range of every
 * assigned partition that batch N reads, written before a record of it is read.
 *
 * @param partitions   range per partition, keyed {@code topic-partition}
 * @param lostRecords  records skipped because Kafka no longer had them ({@code failOnDataLoss: false})
 * @param plannedAtMs  wall-clock time of planning (informational)
 * @param committedBefore the commit entry of batch N-1 as it was appended, without its last
 *                     timestamps (this entry's bases are those): that commit is made durable
 *                     while batch N runs, so a power loss may take it back after this entry is
 *                     durable, and it is restored from here ({@link Checkpoint}). Null for a
 *                     first batch, and in entries written before the field existed (their
 *                     commits were durable before the next batch was planned)
 */
public record BatchOffsets(Map<String, PartitionRange> partitions, long lostRecords, long plannedAtMs,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        BatchCommit committedBefore) {

    public BatchOffsets {
        partitions = new TreeMap<>(partitions);
    }

    /** An entry without the commit before it, as a first batch and builds before the field write it. */
    public BatchOffsets(Map<String, PartitionRange> partitions, long lostRecords, long plannedAtMs) {
        this(partitions, lostRecords, plannedAtMs, null);
    }

    /** This entry carrying {@code commit}, the commit of the batch before, without its last timestamps. */
    public BatchOffsets following(BatchCommit commit) {
        return new BatchOffsets(partitions, lostRecords, plannedAtMs, new BatchCommit(commit.recordsRead(),
                commit.recordsFiltered(), commit.rowsWritten(), commit.deadLettered(), commit.durationMs(), Map.of(),
                commit.committedAtMs(), commit.totals()));
    }

    /**
     * The commit of the batch before, as {@link #committedBefore} keeps it, with its last
     * timestamps: this batch's bases (a partition the batch before did not read keeps its base,
     * which {@link #chainAfter} reads the same way). Empty if this entry does not carry it.
     */
    public java.util.Optional<BatchCommit> restoredCommitBefore() {
        if (committedBefore == null) {
            return java.util.Optional.empty();
        }
        Map<String, Long> bases = new TreeMap<>();
        partitions.forEach((p, r) -> bases.put(p, r.timestampBase()));
        BatchCommit c = committedBefore;
        return java.util.Optional.of(new BatchCommit(c.recordsRead(), c.recordsFiltered(), c.rowsWritten(), c.deadLettered(),
                c.durationMs(), bases, c.committedAtMs(), c.totals()));
    }

    /**
     * Where each partition stands once this batch is committed: its end, and the last timestamp
     * its chain gave ({@code lastTimestamps} of the commit), else the batch's base.
     */
    public Map<String, ChainPoint> chainAfter(Map<String, Long> lastTimestamps) {
        Map<String, ChainPoint> points = new TreeMap<>();
        partitions.forEach((p, r) -> points.put(p, new ChainPoint(r.end(), lastTimestamps.getOrDefault(p, r.timestampBase()))));
        return points;
    }

    /** Records this batch reads at most (gaps from compaction or transactions make it fewer). */
    public long size() {
        return partitions.values().stream().mapToLong(PartitionRange::size).sum();
    }
}
