package io.oncestream.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.TombstoneMode;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;
import io.oncestream.engine.transform.TransformResult;

/**
 * Where each record of a batch goes, between its read and its write (docs/protocol.md §3, steps
 * 3 and 4): a row, a delete (a tombstone with {@code tombstones: delete}), nowhere (filtered
 * out), or, for a bad record, the dead-letter table, or the end of the job with
 * {@code deadLetter.mode: fail}. A bad record is one that does not decode or map, whose row does
 * not bind, or whose row Cassandra refuses even alone. Every write carries the record's write
 * timestamp, a dead letter too, so that a replay writes the same cells.
 */
final class RecordDispatch {

    /** The engine's log lines carry one name, whichever of its classes writes them. */
    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    /**
     * Where a record went: a write to send (its row, its delete or its dead letter), or none if
     * it was filtered out.
     */
    record Routed(RowSink.Write write, boolean deadLetter) {

        static final Routed FILTERED_OUT = new Routed(null, false);

        boolean filteredOut() {
            return write == null;
        }
    }

    private final TombstoneMode tombstones;
    private final DeadLetterMode deadLetterMode;
    private final RecordTransformer transformer;
    private final RowSink sink;

    RecordDispatch(JobConfig config, RecordTransformer transformer, RowSink sink) {
        this.tombstones = config.tombstones();
        this.deadLetterMode = config.deadLetter().mode();
        this.transformer = transformer;
        this.sink = sink;
    }

    /**
     * The write of {@code record} in batch {@code batchId}, with write timestamp {@code ts}.
     *
     * @throws BadRecordException for a bad record with {@code deadLetter.mode: fail}
     */
    Routed route(long batchId, SourceRecord record, long ts) {
        return record.value() == null ? tombstone(batchId, record, ts) : transform(batchId, record, ts);
    }

    private Routed transform(long batchId, SourceRecord record, long ts) {
        TransformResult result = transformer.apply(record);
        if (result instanceof TransformResult.Row row) {
            try {
                return new Routed(sink.prepare(record, row.columns(), ts), false);
            } catch (BadRowException e) {
                return badRecord(batchId, record, e.getMessage(), ts);
            }
        } else if (result instanceof TransformResult.Bad bad) {
            return badRecord(batchId, record, bad.reason(), ts);
        }
        return Routed.FILTERED_OUT;
    }

    /**
     * A record with a null value, as {@code tombstones} says: counted as filtered out, a delete
     * of the row its key columns map to (with the record's write timestamp), or a bad record.
     */
    private Routed tombstone(long batchId, SourceRecord record, long ts) {
        return switch (tombstones) {
            case IGNORE -> Routed.FILTERED_OUT;
            case DEAD_LETTER -> badRecord(batchId, record, "a tombstone (null value), and the job says tombstones: deadLetter", ts);
            case DELETE -> {
                TransformResult key = transformer.keyOf(record, sink.primaryKeyColumns());
                try {
                    if (key instanceof TransformResult.Row row) {
                        yield new Routed(sink.prepareDelete(record, row.columns(), ts), false);
                    }
                    yield badRecord(batchId, record, ((TransformResult.Bad) key).reason(), ts);
                } catch (BadRowException e) {
                    yield badRecord(batchId, record, "tombstone: " + e.getMessage(), ts);
                }
            }
        };
    }

    /**
     * Rows Cassandra refused even alone (over its mutation size limit, say) are bad records like
     * any other: dead-lettered, with the same write timestamp, so that a replay that meets the
     * same refusal writes the same dead letter; or, in fail mode, the job stops with the record
     * named. Returns how many rows became dead letters.
     *
     * @throws SinkException if a refused write was itself a dead letter, or Cassandra refuses one
     *         of these dead letters: the record cannot be kept anywhere
     */
    long deadLetterRefused(long batchId, List<RowSink.Refused> refused, RowSink.SinkListener listener) {
        if (refused.isEmpty()) {
            return 0;
        }
        List<RowSink.Write> letters = new ArrayList<>(refused.size());
        for (RowSink.Refused r : refused) {
            if (r.deadLetter()) {
                throw deadLetterRefused(r);
            }
            LOG.log(Level.WARNING, "batch " + batchId + ": record " + r.record().partitionKey() + " offset "
                    + r.record().offset() + " is a bad record, written to the dead-letter table with its raw value: " + r.reason());
            letters.add(badRecord(batchId, r.record(), r.reason(), r.timestampMicros()).write());
        }
        List<RowSink.Refused> again = sink.writeAll(letters, listener);
        if (!again.isEmpty()) {
            throw deadLetterRefused(again.get(0));
        }
        return refused.size();
    }

    private static SinkException deadLetterRefused(RowSink.Refused r) {
        return new SinkException("the dead letter of record " + r.record().partitionKey() + " offset "
                + r.record().offset() + " was refused: " + r.reason(), null);
    }

    private Routed badRecord(long batchId, SourceRecord record, String reason, long ts) {
        String where = record.partitionKey() + " offset " + record.offset();
        if (deadLetterMode == DeadLetterMode.FAIL) {
            throw new BadRecordException("bad record at " + where + ": " + reason + " (key " + length(record.key())
                    + " bytes, value " + length(record.value()) + " bytes; set deadLetter.mode: table to keep going and"
                    + " keep such records)");
        }
        return new Routed(sink.prepareDeadLetter(record, reason, batchId, ts), true);
    }

    private static String length(byte[] bytes) {
        return bytes == null ? "null" : Integer.toString(bytes.length);
    }
}
