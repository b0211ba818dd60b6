package io.oncestream.engine.config;

/** A job configuration that cannot run; the message names the field, e.g. {@code sink.columns.amount}. */
public class InvalidConfigException extends RuntimeException {

    private final String field;

    public InvalidConfigException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    /** Dotted path of the offending field in the worker configuration. */
    public String field() {
        return field;
    }
}
