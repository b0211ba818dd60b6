package io.oncestream.engine.checkpoint;

/**
 * The offsets of one Kafka partition in one batch: records with {@code start <= offset < end}.
 *
 * @param start         first offset of the batch
 * @param end           offset after the last one of the batch
 * @param timestampBase the last write timestamp (microseconds) given to a record of this
 *                      partition before this batch, 0 if none; see {@code WriteTimestamps}
 */
public record PartitionRange(long start, long end, long timestampBase) {

    public PartitionRange {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("bad range [" + start + ", " + end + ")");
        }
    }

    public long size() {
        return end - start;
    }
}
