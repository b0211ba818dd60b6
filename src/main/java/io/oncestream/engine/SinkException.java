package io.oncestream.engine;

import io.oncestream.engine.failure.OncestreamException;

/** Cassandra refused a write in a way retrying cannot fix; the message names table and record. */
public class SinkException extends OncestreamException {

    public SinkException(String message, Throwable cause) {
        super(message, cause, true);
    }
}
