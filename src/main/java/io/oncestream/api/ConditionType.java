package io.oncestream.api;

/** The conditions of a StreamJob's status; {@code Condition.type} is one of these names. */
public enum ConditionType {
    /** The job does what its spec asks: workers running and ready, or an availableNow job completed. */
    Ready,
    /** Batches are planned and committed now. */
    Progressing,
    /** The spec compiles and maps to a worker configuration its checkpoints can follow. */
    ConfigValid,
    /** Cassandra acknowledges the workers' writes. */
    SinkAvailable,
    /** Kafka answers the workers. */
    SourceAvailable,
    /** The job's workers are being replaced by another number of them at a batch boundary (docs/protocol.md §11). */
    Rescaling,
    /** Nothing will change without a change of the spec (kstatus reads True as Failed). */
    Stalled
}
