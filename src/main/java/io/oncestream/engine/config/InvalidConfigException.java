package io.oncestream.engine.config;

import io.oncestream.engine.failure.OncestreamException;

/** A job configuration that cannot run; the message names the field, e.g. {@code sink.columns.amount}. */
public class InvalidConfigException extends OncestreamException {

    private final String field;
    private final String reason;

    public InvalidConfigException(String field, String reason) {
        super(field + ": " + reason, true);
        this.field = field;
        this.reason = reason;
    }

    /** What is wrong, without the field. */
    public String reason() {
        return reason;
    }

    /** Dotted path of the offending field in the worker configuration. */
    public String field() {
        return field;
    }
}
