package io.oncestream.engine;

import java.util.List;
import java.util.Map;

import io.oncestream.engine.transform.SourceRecord;

/** Where rows go: prepared writes, then written together, retried until acknowledged. */
public interface RowSink extends AutoCloseable {

    /** A write ready to send. */
    interface Write {
    }

    /**
     * Turns a mapped row into a write with the given timestamp.
     *
     * @throws BadRowException if the row cannot be written (a value of the wrong type, a null key)
     */
    Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException;

    /** The names of the table's primary-key columns, which a delete needs. */
    List<String> primaryKeyColumns();

    /**
     * A delete of the row with primary key {@code key} (one value per primary-key column) at the
     * given timestamp: what a tombstone does with {@code tombstones: delete}.
     *
     * @throws BadRowException if a key value is null or of the wrong type
     */
    Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException;

    /** A dead-letter write for a record that could not be decoded, mapped or bound. */
    Write prepareDeadLetter(SourceRecord record, String error, long batchId, long timestampMicros);

    /**
     * Writes everything and returns once Cassandra acknowledged every write but those it refuses
     * even when sent alone for their size (a row over the node's mutation limit), which it
     * returns. Transient failures are retried with backoff for as long as it takes, telling
     * {@code listener}.
     *
     * @throws SinkException if Cassandra refuses a write for any other reason (no permission, a
     *         dropped table): a retry cannot help, and it is not the record's fault
     */
    List<Refused> writeAll(List<Write> writes, SinkListener listener);

    /**
     * A write that Cassandra refused even alone: the record it came from, the write's timestamp,
     * the bytes of its values and Cassandra's words.
     *
     * @param deadLetter whether the refused write was the record's dead letter
     */
    record Refused(SourceRecord record, long timestampMicros, long bytes, String reason, boolean deadLetter) {
    }

    @Override
    void close();

    /** Told what the sink is doing, for progress and health. */
    interface SinkListener {
        /** A listener that ignores everything (a write whose progress nobody reports). */
        SinkListener NONE = new SinkListener() {
            @Override
            public void waitingForSink(Throwable cause, int pendingWrites) {
            }

            @Override
            public void sinkAvailable() {
            }

            @Override
            public void acknowledged(int count) {
            }
        };

        /** Some writes failed transiently; they will be retried after a pause. */
        void waitingForSink(Throwable cause, int pendingWrites);

        /** Writes are being acknowledged again. */
        void sinkAvailable();

        /** {@code count} more writes were acknowledged. */
        void acknowledged(int count);
    }
}
