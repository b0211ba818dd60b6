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
 */
public record BatchOffsets(Map<String, PartitionRange> partitions, long lostRecords, long plannedAtMs) {

    public BatchOffsets {
        partitions = new TreeMap<>(partitions);
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
