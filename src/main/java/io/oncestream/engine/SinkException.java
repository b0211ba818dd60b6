package io.oncestream.engine;

/** Cassandra refused a write in a way retrying cannot fix; the message names table and record. */
public class SinkException extends RuntimeException {

    public SinkException(String message, Throwable cause) {
        super(message, cause);
    }
}
