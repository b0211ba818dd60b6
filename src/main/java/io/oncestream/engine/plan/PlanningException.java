package io.oncestream.engine.plan;

/** The checkpoint and Kafka disagree in a way the engine must not guess about; the message says how. */
public class PlanningException extends RuntimeException {

    public PlanningException(String message) {
        super(message);
    }
}
