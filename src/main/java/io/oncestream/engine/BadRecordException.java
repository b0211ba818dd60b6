package io.oncestream.engine;

/** A record that could not be decoded or mapped, in a job configured to fail on bad records. */
public class BadRecordException extends RuntimeException {

    public BadRecordException(String message) {
        super(message);
    }
}
