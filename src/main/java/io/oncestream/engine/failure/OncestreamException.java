package io.oncestream.engine.failure;

/**
 * A failure that Oncestream foresaw and explains: its message names the thing (a file, a field
 * path, a record, a table) and what is wrong with it, so a worker logs the message alone,
 * without a stack trace. {@link #permanent()} tells the two kinds of failure apart
 * ({@code io.oncestream.engine.FailureKind}): a permanent one needs a person (a change of the
 * spec, the data or the checkpoint); a transient one may pass by itself and is retried.
 * <p>
 * It lives in a package of its own, below every other engine package, so that the
 * configuration, checkpoint and planning packages can throw it without depending on the engine.
 */
public abstract class OncestreamException extends RuntimeException {

    private final boolean permanent;

    protected OncestreamException(String message, boolean permanent) {
        super(message);
        this.permanent = permanent;
    }

    protected OncestreamException(String message, Throwable cause, boolean permanent) {
        super(message, cause);
        this.permanent = permanent;
    }

    /** Whether it needs a person rather than time: {@code FailureKind.PERMANENT}. */
    public final boolean permanent() {
        return permanent;
    }
}
