package io.oncestream.engine;

import io.oncestream.engine.failure.OncestreamException;

/** A record that could not be decoded or mapped, in a job configured to fail on bad records. */
public class BadRecordException extends OncestreamException {

    public BadRecordException(String message) {
        super(message, true);
    }
}
