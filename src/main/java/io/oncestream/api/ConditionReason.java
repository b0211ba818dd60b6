package io.oncestream.api;

/** Every {@code Condition.reason} a StreamJob's status can carry, one CamelCase word each. */
public enum ConditionReason {
    // ConfigValid
    SpecValid, InvalidSpec, ChangeRefused,
    // Ready
    WorkersReady, WorkersStarting, WorkersDegraded, CheckpointVolumeUnavailable, WorkerFailed, Completed, Suspended,
    ReconcileFailed,
    // SinkAvailable, SourceAvailable
    NoWorkerReported, WritesAcknowledged, WritesFailing, KafkaReachable, KafkaUnreachable,
    // Progressing
    BatchesCommitting, NotCommitting, WorkerWaiting,
    // Rescaling (and Progressing while it runs)
    StoppingAtBarrier, StartingWorkers, RescaleCompleted,
    // Stalled
    NotStalled
}
