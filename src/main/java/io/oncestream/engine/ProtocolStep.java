package io.oncestream.engine;

/** Points of the batch protocol at which {@link ProtocolHooks} are called (crash tests stop the worker there). */
public enum ProtocolStep {
    /** {@code offsets/N} is durable; nothing read yet. */
    AFTER_WAL,
    /** About half of the batch's records were read. */
    MID_READ,
    /** About half of the batch's writes were acknowledged by Cassandra. */
    MID_WRITE,
    /** Every write acknowledged; {@code commits/N} not yet written. */
    AFTER_SINK,
    /** {@code commits/N} is durable; consumer-group offsets not yet committed to Kafka. */
    AFTER_COMMIT_LOG
}
