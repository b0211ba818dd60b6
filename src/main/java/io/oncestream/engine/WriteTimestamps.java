package io.oncestream.engine;

/**
 * The rule that makes replays invisible: the {@code USING TIMESTAMP} of a record's write.
 *
 * <p>Within one Kafka partition, records get strictly increasing timestamps in offset order:
 * {@code ts(r) = max(ts(previous record) + 1, r.timestampMs * 1000)}. The chain starts from
 * the partition's {@code timestampBase}, stored in the batch's write-ahead-log entry (it is
 * the last timestamp of the previous committed batch). So a replay of batch N, with the same
 * records and the same base, computes exactly the same timestamps, and since Cassandra keeps
 * the write with the highest timestamp, whatever order the writes of a replay arrive in, and
 * however often, the table ends as if each record had been applied once in offset order.
 *
 * <p>The record's own timestamp keeps the values near wall-clock time, so writes of other
 * clients and {@code DELETE}s compare sensibly; the {@code +1} keeps the order even when
 * producers send equal or out-of-order timestamps.
 */
public final class WriteTimestamps {

    private WriteTimestamps() {
    }

    /** The write timestamp (microseconds) of the record after one written at {@code previous}. */
    public static long next(long previous, long recordTimestampMs) {
        long fromRecord = recordTimestampMs > 0 ? Math.multiplyExact(recordTimestampMs, 1000L) : 0L;
        return Math.max(previous + 1, fromRecord);
    }
}
