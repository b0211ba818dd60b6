package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;

/**
 * Where each record goes, one record at a time, without a batch around it: a row, a delete,
 * nowhere, or a dead letter (or the end of the job in fail mode), each write with the record's
 * timestamp; and rows the sink refused even alone, as dead letters.
 */
class RecordDispatchTest {

    private static final long BATCH = 7;
    private static final long TS = 1_700_000_000_000_123L;
    private static final RowSink.SinkListener QUIET = RowSink.SinkListener.NONE;

    private static final String PAID = "{\"id\": \"a\", \"amount\": 5, \"status\": \"PAID\"}";

    private final LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);

    @Test
    void aKeptRecordIsARowWithItsTimestamp() {
        RecordDispatch.Routed routed = dispatch("ignore", "table").route(BATCH, record(0, "a", PAID), TS);
        assertThat(routed.filteredOut()).isFalse();
        assertThat(routed.deadLetter()).isFalse();
        write(routed);
        assertThat(table.rows()).containsOnlyKeys("a");
        assertThat(table.rows().get("a")).containsEntry("amount", 5L);
        assertThat(table.timestampOf("orders-0", 0)).isEqualTo(TS);
    }

    @Test
    void aRecordTheFilterDropsGoesNowhere() {
        RecordDispatch.Routed routed = dispatch("ignore", "table").route(BATCH, record(0, "a", PAID.replace("PAID", "NEW")), TS);
        assertThat(routed).isSameAs(RecordDispatch.Routed.FILTERED_OUT);
        assertThat(routed.write()).isNull();
    }

    @Test
    void aValueThatDoesNotDecodeIsADeadLetterWithItsTimestamp() {
        RecordDispatch.Routed routed = dispatch("ignore", "table").route(BATCH, record(3, "a", "not json"), TS);
        assertThat(routed.deadLetter()).isTrue();
        write(routed);
        assertThat(table.rows()).isEmpty();
        assertThat(table.deadLetters()).containsOnlyKeys("orders-0@3");
        assertThat(table.timestampOf("orders-0", 3)).isEqualTo(TS);
    }

    @Test
    void aRowTheSinkCannotBindIsADeadLetterWithTheSinksReason() {
        RecordDispatch.Routed routed = dispatch("ignore", "table", "value.id")
                .route(BATCH, record(4, "a", "{\"id\": null, \"amount\": 5, \"status\": \"PAID\"}"), TS);
        assertThat(routed.deadLetter()).isTrue();
        write(routed);
        assertThat(table.deadLetters()).containsEntry("orders-0@4", "primary key column id is null");
    }

    @Test
    void inFailModeABadRecordEndsTheJobNamingTheRecordAndItsSizes() {
        assertThatThrownBy(() -> dispatch("ignore", "fail").route(BATCH, record(3, "ab", "not json"), TS))
                .isInstanceOf(BadRecordException.class)
                .hasMessageStartingWith("bad record at orders-0 offset 3: ")
                .hasMessageContaining("(key 2 bytes, value 8 bytes; set deadLetter.mode: table");
        assertThatThrownBy(() -> dispatch("deadLetter", "fail").route(BATCH, record(3, null, null), TS))
                .isInstanceOf(BadRecordException.class)
                .hasMessageContaining("(key null bytes, value null bytes;");
    }

    @Test
    void aTombstoneIsIgnoredDeadLetteredOrADeleteOfItsKey() {
        SourceRecord tombstone = record(2, "a", null);
        assertThat(dispatch("ignore", "table").route(BATCH, tombstone, TS)).isSameAs(RecordDispatch.Routed.FILTERED_OUT);

        RecordDispatch.Routed dead = dispatch("deadLetter", "table").route(BATCH, tombstone, TS);
        assertThat(dead.deadLetter()).isTrue();
        write(dead);
        assertThat(table.deadLetters()).containsEntry("orders-0@2",
                "a tombstone (null value), and the job says tombstones: deadLetter");

        write(dispatch("ignore", "table").route(BATCH, record(1, "a", PAID), TS - 1));
        RecordDispatch.Routed delete = dispatch("delete", "table").route(BATCH, tombstone, TS);
        assertThat(delete.deadLetter()).isFalse();
        assertThat(delete.filteredOut()).isFalse();
        write(delete);
        assertThat(table.rows()).as("the delete, later than the row, removed it").isEmpty();
    }

    @Test
    void aTombstoneWhoseKeyColumnsNeedTheValueIsADeadLetter() {
        RecordDispatch.Routed routed = dispatch("delete", "table", "value.id").route(BATCH, record(2, "a", null), TS);
        assertThat(routed.deadLetter()).isTrue();
        write(routed);
        assertThat(table.deadLetters().get("orders-0@2").toString()).startsWith("sink.columns.id");
    }

    @Test
    void theCountsFollowWhereRecordsWent() {
        RecordDispatch dispatch = dispatch("ignore", "table");
        BatchCounts counts = new BatchCounts();
        for (SourceRecord r : List.of(record(0, "a", PAID),
                record(1, "b", "{\"id\": \"b\", \"amount\": 5, \"status\": \"NEW\"}"), record(2, "c", null),
                record(3, "d", "not json"))) {
            counts.routed(dispatch.route(BATCH, r, TS));
            counts.recordRead();
        }
        counts.writesAcknowledged(2);
        assertThat(counts.totals()).isEqualTo(new io.oncestream.contract.RecordTotals(4, 2, 1, 1));
    }

    @Test
    void rowsRefusedEvenAloneBecomeDeadLettersWithTheSameTimestamp() {
        SourceRecord big = record(9, "a", PAID);
        long deadLettered = dispatch("ignore", "table").deadLetterRefused(BATCH,
                List.of(new RowSink.Refused(big, TS, 2_000_000, "Cassandra refused the row (2000000 bytes) even alone", false)),
                QUIET);
        assertThat(deadLettered).isEqualTo(1);
        assertThat(table.deadLetters()).containsEntry("orders-0@9", "Cassandra refused the row (2000000 bytes) even alone");
        assertThat(table.timestampOf("orders-0", 9)).isEqualTo(TS);
        assertThat(dispatch("ignore", "table").deadLetterRefused(BATCH, List.of(), QUIET)).isZero();
    }

    @Test
    void aRefusedDeadLetterEndsTheJobNamingTheRecord() {
        SourceRecord big = record(9, "a", "x".repeat(10));
        assertThatThrownBy(() -> dispatch("ignore", "table").deadLetterRefused(BATCH,
                List.of(new RowSink.Refused(big, TS, 10, "too large", true)), QUIET))
                .isInstanceOf(SinkException.class)
                .hasMessage("the dead letter of record orders-0 offset 9 was refused: too large");
        RowSink refusingAll = new RefusingSink(table);
        RecordDispatch dispatch = new RecordDispatch(config("ignore", "table", "key"), transformer("ignore", "table", "key"),
                refusingAll);
        assertThatThrownBy(() -> dispatch.deadLetterRefused(BATCH, List.of(new RowSink.Refused(big, TS, 10, "too large", false)),
                QUIET))
                .isInstanceOf(SinkException.class)
                .hasMessage("the dead letter of record orders-0 offset 9 was refused: refused again");
    }

    private void write(RecordDispatch.Routed routed) {
        assertThat(table.writeAll(List.of(routed.write()), QUIET)).isEmpty();
    }

    private RecordDispatch dispatch(String tombstones, String deadLetterMode) {
        return dispatch(tombstones, deadLetterMode, "key");
    }

    private RecordDispatch dispatch(String tombstones, String deadLetterMode, String idExpression) {
        return new RecordDispatch(config(tombstones, deadLetterMode, idExpression),
                transformer(tombstones, deadLetterMode, idExpression), table);
    }

    private static RecordTransformer transformer(String tombstones, String deadLetterMode, String idExpression) {
        return RecordTransformer.compile(config(tombstones, deadLetterMode, idExpression));
    }

    private static SourceRecord record(long offset, String key, String value) {
        return new SourceRecord("orders", 0, offset, 1_700_000_000_000L + offset, bytes(key), bytes(value), Map.of());
    }

    private static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    private static JobConfig config(String tombstones, String deadLetterMode, String idExpression) {
        String deadLetter = deadLetterMode.equals("table") ? "{\"mode\": \"table\", \"table\": \"t_dead_letters\"}"
                : "{\"mode\": \"fail\"}";
        return JobConfigs.parse("""
                {"jobId": "t/dispatch", "source": {"bootstrapServers": "k:9092", "topics": ["orders"]},
                 "filter": "value.status == 'PAID'",
                 "tombstones": "%s",
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "%s", "amount": "value.amount"}},
                 "deadLetter": %s}
                """.formatted(tombstones, idExpression, deadLetter));
    }

    /** A sink whose every write is refused, even alone: a dead letter of a refused row has nowhere to go. */
    private record RefusingSink(LastWriteWinsSink prepared) implements RowSink {

        @Override
        public Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException {
            return prepared.prepare(origin, columns, timestampMicros);
        }

        @Override
        public List<String> primaryKeyColumns() {
            return prepared.primaryKeyColumns();
        }

        @Override
        public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException {
            return prepared.prepareDelete(origin, key, timestampMicros);
        }

        @Override
        public Write prepareDeadLetter(SourceRecord record, String error, long batchId, long timestampMicros) {
            return prepared.prepareDeadLetter(record, error, batchId, timestampMicros);
        }

        @Override
        public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
            return List.of(new Refused(record(9, "a", "x"), TS, 10, "refused again", true));
        }

        @Override
        public void close() {
        }
    }
}
