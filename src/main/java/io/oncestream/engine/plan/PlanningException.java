package io.oncestream.engine.plan;

import io.oncestream.engine.failure.OncestreamException;

/** The checkpoint and Kafka disagree in a way the engine must not guess about; the message says how. */
public class PlanningException extends OncestreamException {

    public PlanningException(String message) {
        super(message, true);
    }
}
