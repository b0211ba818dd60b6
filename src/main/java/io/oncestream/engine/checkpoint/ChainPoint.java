package io.oncestream.engine.checkpoint;

import java.util.Map;
import java.util.TreeMap;

/**
 * Where a partition's timestamp chain stands between batches: the next offset to read and the
 * last write timestamp (microseconds) given to a record of the partition, 0 if none. All a
 * partition's state; what a rescale hands from its old owner to its new one.
 */
public record ChainPoint(long offset, long lastTimestamp) {

    public ChainPoint {
        if (offset < 0 || lastTimestamp < 0) {
            throw new IllegalArgumentException("bad chain point: offset " + offset + ", last timestamp " + lastTimestamp);
        }
    }

    /** Where each partition of a committed batch stands: its end, and the last timestamp its chain gave (else the batch's base). */
    public static Map<String, ChainPoint> afterBatch(BatchOffsets offsets, Map<String, Long> lastTimestamps) {
        Map<String, ChainPoint> points = new TreeMap<>();
        offsets.partitions().forEach((p, r) -> points.put(p, new ChainPoint(r.end(), lastTimestamps.getOrDefault(p, r.timestampBase()))));
        return points;
    }
}
