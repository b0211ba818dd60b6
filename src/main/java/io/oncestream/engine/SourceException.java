package io.oncestream.engine;

/** Kafka could not be read as the job needs; the message names the topic or partition. */
public class SourceException extends RuntimeException {

    public SourceException(String message, Throwable cause) {
        super(message, cause);
    }

    public SourceException(String message) {
        super(message);
    }
}
