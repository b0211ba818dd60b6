package io.oncestream.engine;

import io.oncestream.engine.failure.OncestreamException;

/**
 * The two kinds of failure a worker knows (docs/worker.md lists them). A transient one may
 * pass by itself and is retried for ever with back-off while the worker reports it; a
 * permanent one needs a person (a change of the spec, the data or the checkpoint), fails the
 * job and names the cause.
 */
public enum FailureKind {
    TRANSIENT, PERMANENT;

    /**
     * Permanent: an {@link OncestreamException} that says so — an invalid configuration, a
     * refused write that is not the record's fault (no permission, a dropped table), a bad record
     * with {@code deadLetter.mode: fail}, a checkpoint that is corrupt, foreign or ahead of
     * Kafka, offsets Kafka no longer has with {@code failOnDataLoss: true}. Everything else is
     * transient: the checkpoint lock held, the volume full or read-only, Kafka or Cassandra
     * unreachable, overloaded or timing out, and whatever else was not foreseen (a retry costs a
     * pause; a wrong "permanent" costs the job).
     */
    public static FailureKind of(Throwable failure) {
        return failure instanceof OncestreamException explained && explained.permanent() ? PERMANENT : TRANSIENT;
    }
}
