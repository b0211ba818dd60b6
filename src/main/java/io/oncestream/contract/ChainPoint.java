package io.oncestream.contract;

/**
 * Where a partition's timestamp chain stands between batches: the next offset to read and the
 * last write timestamp (microseconds) given to a record of the partition, 0 if none. All a
 * partition's state; what a rescale hands from its old owner to its new one, in a worker's seal
 * ({@link CheckpointSeal}) and the job's savepoint.
 */
public record ChainPoint(long offset, long lastTimestamp) {

    public ChainPoint {
        if (offset < 0 || lastTimestamp < 0) {
            throw new IllegalArgumentException("bad chain point: offset " + offset + ", last timestamp " + lastTimestamp);
        }
    }
}
