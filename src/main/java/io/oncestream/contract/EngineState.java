package io.oncestream.contract;

/**
 * What a worker's engine is doing, as reported in {@code /progress}. The {@code WAITING_FOR_*}
 * states and {@code RETRYING} are transient failures the worker waits out by itself (see
 * {@code engine.FailureKind}); {@code FAILED} is a permanent one.
 */
public enum EngineState {
    STARTING, PLANNING, READING, WRITING, COMMITTING, IDLE, WAITING_FOR_SINK, WAITING_FOR_SOURCE,
    /** Another process holds the checkpoint's lock (the process of a force-deleted pod, say). */
    WAITING_FOR_CHECKPOINT_LOCK,
    /** The checkpoint volume cannot be written or read now (full, read-only, I/O errors). */
    WAITING_FOR_CHECKPOINT,
    /** Another transient failure: the worker starts its engine again after a pause. */
    RETRYING,
    /**
     * The worker stopped at a barrier and sealed its checkpoint for a rescale: it waits, reporting
     * its seal, for the operator to replace it (docs/protocol.md §11).
     */
    AT_BARRIER,
    COMPLETED, STOPPED, FAILED;

    /**
     * A state as a worker reported it, if this build knows it; null for a state a newer worker
     * added (or none), which is shown as reported and counts as no known state.
     */
    public static EngineState ofReported(String state) {
        if (state == null) {
            return null;
        }
        try {
            return valueOf(state);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether a worker in this state is doing its work (what its readiness probe says). */
    public boolean working() {
        return switch (this) {
            case STARTING, WAITING_FOR_CHECKPOINT_LOCK, WAITING_FOR_CHECKPOINT, RETRYING, FAILED -> false;
            default -> true;
        };
    }
}
