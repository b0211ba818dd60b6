package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.oncestream.testing.TextEdits;
import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.cassandra.CassandraSink;
import io.oncestream.engine.cassandra.UnloggedBatches;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.config.TestConfigs;
import io.oncestream.engine.transform.SourceRecord;
import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;

/** The Cassandra sink against a real node: table checks, value conversion, and replays in any order. */
@ExtendWith(CassandraExtension.class)
class CassandraSinkIT {

    private static final RowSink.SinkListener QUIET = RowSink.SinkListener.NONE;

    @Test
    void tablesThatCannotBeWrittenExactlyOnceAreRefusedByName(CassandraNode cassandra) {
        String ks = cassandra.createKeyspace("sinkcheck");
        CqlSession s = cassandra.session();
        s.execute(OrderStream.createTable(ks, "paid_orders"));
        s.execute("CREATE TABLE " + ks + ".counts (order_id text PRIMARY KEY, n counter)");

        assertThatThrownBy(() -> open(cassandra, ks, "missing", Map.of()))
                .isInstanceOf(InvalidConfigException.class).hasMessage("sink.table: table " + ks + ".missing does not exist");
        assertThatThrownBy(() -> open(cassandra, ks, "counts", Map.of(
                "\"amount\": \"value.amount\", \"customer\": \"value.customer.name\",", "",
                "\"seq\": \"value.seq\"", "\"n\": \"value.n\"")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("sink.table: " + ks + ".counts has counter column n");
        assertThatThrownBy(() -> open(cassandra, ks, "paid_orders", Map.of("\"seq\": \"value.seq\"", "\"sequence\": \"value.seq\"")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageStartingWith("sink.columns.sequence: column sequence does not exist in " + ks + ".paid_orders");
        assertThatThrownBy(() -> open(cassandra, ks, "paid_orders", Map.of("\"order_id\": \"value.id\", ", "")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessage("sink.columns: primary-key column order_id of " + ks + ".paid_orders has no expression");
    }

    /**
     * The worker's own session fetches the schema of the job's keyspace only: a keyspace the job
     * names in mixed case (unquoted CQL, so stored in lower case) is still found, and a missing
     * one is an error naming the field.
     */
    @Test
    void theWorkersSessionFindsItsKeyspaceAsCqlNamesIt(CassandraNode cassandra) throws BadRowException {
        String ks = cassandra.createKeyspace("sessionks");
        cassandra.session().execute(OrderStream.createTable(ks, "paid_orders"));
        String mixedCase = Character.toUpperCase(ks.charAt(0)) + ks.substring(1, 4).toUpperCase() + ks.substring(4);
        String contactPoint = cassandra.contactPoint().getHostString() + ":" + cassandra.contactPoint().getPort();
        for (String keyspace : List.of(ks, mixedCase)) {
            JobConfig config = JobConfigs.parse(TestConfigs.orders("it/session", "127.0.0.1:1", "t", contactPoint,
                    cassandra.datacenter(), keyspace, "paid_orders"));
            try (CqlSession session = CassandraSessions.open(config.sink(), null, null)) {
                CassandraSink sink = CassandraSink.open(session, config, () -> false);
                sink.writeAll(List.of(sink.prepare(record(7), Map.of("order_id", "o-" + keyspace, "amount", 1.0, "customer", "c",
                        "seq", 7L), 1)), QUIET);
            }
            assertThat(cassandra.session().execute("SELECT order_id FROM " + ks + ".paid_orders WHERE order_id = 'o-" + keyspace + "'")
                    .one()).as(keyspace).isNotNull();
        }
        JobConfig missing = JobConfigs.parse(TestConfigs.orders("it/session", "127.0.0.1:1", "t", contactPoint,
                cassandra.datacenter(), "no_such_keyspace", "paid_orders"));
        try (CqlSession session = CassandraSessions.open(missing.sink(), null, null)) {
            assertThatThrownBy(() -> CassandraSink.open(session, missing, () -> false)).isInstanceOf(InvalidConfigException.class)
                    .hasMessage("sink.keyspace: keyspace no_such_keyspace does not exist");
        }
    }

    @Test
    void valuesOfTheWrongTypeAreBadRowsNotSinkErrors(CassandraNode cassandra) {
        String ks = cassandra.createKeyspace("sinkconv");
        cassandra.session().execute(OrderStream.createTable(ks, "paid_orders"));
        CassandraSink sink = open(cassandra, ks, "paid_orders", Map.of());
        SourceRecord origin = record(0);

        assertThatThrownBy(() -> sink.prepare(origin, Map.of("order_id", "o1", "amount", "lots", "customer", "c", "seq", 1L), 1))
                .isInstanceOf(BadRowException.class).hasMessage("sink.columns.amount: String lots cannot be stored in a double column");
        assertThatThrownBy(() -> sink.prepare(origin, Map.of("order_id", "o1", "amount", 1.0, "customer", "c", "seq", 1.5), 1))
                .isInstanceOf(BadRowException.class).hasMessage("sink.columns.seq: Double 1.5 is not a whole number");
        Map<String, Object> nullKey = new HashMap<>(Map.of("amount", 1.0, "customer", "c", "seq", 1L));
        nullKey.put("order_id", null);
        assertThatThrownBy(() -> sink.prepare(origin, nullKey, 1))
                .isInstanceOf(BadRowException.class).hasMessage("sink.columns.order_id: primary-key column is null");
    }

    @Test
    void replayingShuffledBatchesLeavesTheTableOfInOrderApplication(CassandraNode cassandra) throws BadRowException {
        replayShuffled(cassandra, "replay", false);
    }

    /**
     * Tombstones with {@code tombstones: delete}: deletes carry the record's write timestamp like
     * upserts, so replays in any order leave what in-order application leaves: a deleted key is
     * absent unless a later record wrote it again.
     */
    @Test
    void replayingShuffledBatchesWithDeletesLeavesTheTableOfInOrderApplication(CassandraNode cassandra) throws BadRowException {
        replayShuffled(cassandra, "replay_deletes", true);
    }

    private static void replayShuffled(CassandraNode cassandra, String keyspacePrefix, boolean deletes) throws BadRowException {
        String ks = cassandra.createKeyspace(keyspacePrefix);
        cassandra.session().execute(OrderStream.createTable(ks, "paid_orders"));
        CassandraSink sink = open(cassandra, ks, "paid_orders", Map.of());
        Random random = new Random(42);
        Map<String, String> expected = new TreeMap<>();
        List<List<RowSink.Write>> batches = new ArrayList<>();
        long ts = 0;
        long clock = 1_700_000_000_000L;
        for (int batch = 0, offset = 0; batch < 20; batch++) {
            List<RowSink.Write> writes = new ArrayList<>();
            for (int i = 0; i < 100; i++, offset++) {
                clock += random.nextInt(3) - 1; // producer timestamps that repeat and go backwards
                ts = WriteTimestamps.next(ts, clock);
                String id = "o" + random.nextInt(40);
                if (deletes && random.nextInt(4) == 0) {
                    writes.add(sink.prepareDelete(record(offset), Map.of("order_id", id), ts));
                    expected.remove(id);
                    continue;
                }
                writes.add(sink.prepare(record(offset), Map.of("order_id", id, "amount", (double) offset, "customer", "c",
                        "seq", (long) offset), ts));
                expected.put(id, offset + ".0 c " + offset);
            }
            batches.add(writes);
        }
        // Every batch twice, in random order, each batch's writes shuffled too.
        List<List<RowSink.Write>> replays = new ArrayList<>(batches);
        replays.addAll(batches);
        Collections.shuffle(replays, random);
        for (List<RowSink.Write> batch : replays) {
            List<RowSink.Write> shuffled = new ArrayList<>(batch);
            Collections.shuffle(shuffled, random);
            sink.writeAll(shuffled, QUIET);
        }
        Map<String, String> actual = new TreeMap<>();
        for (Row r : cassandra.session().execute("SELECT order_id, amount, customer, seq FROM " + ks + ".paid_orders")) {
            actual.put(r.getString("order_id"), r.getDouble("amount") + " " + r.getString("customer") + " " + r.getLong("seq"));
        }
        assertThat(actual).isEqualTo(expected);
        if (deletes) {
            assertThat(expected.size()).as("keys left after deletes").isBetween(5, 35);
        }
    }

    /**
     * One row per partition, as most tables have: partitions with the same replicas (on one
     * node, all of them) share unlogged batches of up to 10 partitions and 32 rows; a partition's
     * full batches go alone; with no replicas known every partition goes alone. The node warns
     * about none of these batches, and does about a batch of 11 partitions: why the default is 10.
     */
    @Test
    void partitionsWithTheSameReplicasShareBatchesTheNodeDoesNotWarnAbout(CassandraNode cassandra) {
        String ks = cassandra.createKeyspace("grouping");
        CqlSession s = cassandra.session();
        s.execute(OrderStream.createTable(ks, "paid_orders"));
        PreparedStatement insert = s.prepare("INSERT INTO " + ks + ".paid_orders (order_id, amount, customer, seq)"
                + " VALUES (?, ?, ?, ?) USING TIMESTAMP ?");
        Map<String, List<BoundStatement>> byPartition = new LinkedHashMap<>();
        long ts = 0;
        for (int i = 0; i < 40; i++) {
            byPartition.computeIfAbsent("big", k -> new ArrayList<>()).add(insert.bind("big", 1.0, "c", (long) i, ++ts));
        }
        for (int i = 0; i < 45; i++) {
            byPartition.put("o" + i, List.of(insert.bind("o" + i, 1.0, "c", (long) i, ++ts)));
        }
        var replicas = UnloggedBatches.replicas(s);
        assertThat(replicas.apply(byPartition.get("o0").get(0))).as("the node's token map knows the replicas").isNotNull();

        List<Statement<?>> requests = UnloggedBatches.group(byPartition, 32, 10, 5120, replicas);
        assertThat(requests.stream().map(CassandraSinkIT::rows).sorted().toList()).containsExactly(6, 10, 10, 10, 17, 32);
        for (Statement<?> request : requests) {
            assertThat(partitions(request)).as("partitions in one request").isBetween(1L, 10L);
            assertThat(s.execute(request).getExecutionInfo().getWarnings()).as("the node's warnings").isEmpty();
        }
        assertThat(partitions(requests.get(0))).as("the full batch of one partition").isEqualTo(1L);
        Map<String, Long> table = new TreeMap<>();
        s.execute("SELECT order_id, seq FROM " + ks + ".paid_orders").forEach(r -> table.put(r.getString(0), r.getLong(1)));
        assertThat(table).hasSize(46).containsEntry("big", 39L).containsEntry("o44", 44L);

        List<Statement<?>> alone = UnloggedBatches.group(byPartition, 32, 10, 5120, st -> null);
        assertThat(alone).hasSize(47);
        assertThat(alone.stream().filter(r -> partitions(r) > 1)).isEmpty();
        assertThat(UnloggedBatches.group(byPartition, 32, 1, 5120, replicas)).hasSize(47);

        Map<String, List<BoundStatement>> eleven = new LinkedHashMap<>();
        byPartition.entrySet().stream().skip(1).limit(11).forEach(e -> eleven.put(e.getKey(), e.getValue()));
        List<Statement<?>> one = UnloggedBatches.group(eleven, 32, 11, 5120, replicas);
        assertThat(one).hasSize(1);
        assertThat(s.execute(one.get(0)).getExecutionInfo().getWarnings())
                .anySatisfy(w -> assertThat(w).contains("Unlogged batch covering 11 partitions"));
    }

    /**
     * Rows of 30 KB in partitions on one node: sharing a batch, three of them are over 50 KiB and
     * the node refuses the batch ("Batch too large", what stopped jobs for good); within the
     * default byte limit each goes alone and every one is written.
     */
    @Test
    void largeRowsDoNotShareABatchTheNodeRefuses(CassandraNode cassandra) {
        String ks = cassandra.createKeyspace("largebatch");
        CqlSession s = cassandra.session();
        s.execute(OrderStream.createTable(ks, "paid_orders"));
        PreparedStatement insert = s.prepare("INSERT INTO " + ks + ".paid_orders (order_id, amount, customer, seq)"
                + " VALUES (?, ?, ?, ?) USING TIMESTAMP ?");
        Map<String, List<BoundStatement>> byPartition = new LinkedHashMap<>();
        for (int i = 0; i < 6; i++) {
            byPartition.put("o" + i, List.of(insert.bind("o" + i, 1.0, "c".repeat(i % 2 == 0 ? 30_000 : 100), (long) i, 1L)));
        }
        var replicas = UnloggedBatches.replicas(s);
        List<Statement<?>> unlimited = UnloggedBatches.group(byPartition, 32, 10, Integer.MAX_VALUE, replicas);
        assertThat(unlimited).hasSize(1);
        assertThatThrownBy(() -> s.execute(unlimited.get(0))).hasMessageContaining("Batch too large");

        List<Statement<?>> requests = UnloggedBatches.group(byPartition, 32, 10, 5120, replicas);
        assertThat(requests.stream().map(CassandraSinkIT::rows).sorted().toList()).containsExactly(1, 1, 1, 3);
        requests.forEach(s::execute);
        assertThat(s.execute("SELECT count(*) FROM " + ks + ".paid_orders").one().getLong(0)).isEqualTo(6);
    }

    /**
     * A node that counts a batch's bytes higher than the sink does (Cassandra adds a few bytes a
     * cell) refuses a batch the sink thought small enough: the sink sends its writes alone, all
     * are written, and none is the record's fault.
     */
    @Test
    void aBatchTheNodeRefusesIsSplitAndEveryRowWritten(CassandraNode cassandra) throws BadRowException {
        String ks = cassandra.createKeyspace("splitbatch");
        cassandra.session().execute(OrderStream.createTable(ks, "paid_orders"));
        CassandraSink sink = open(cassandra, ks, "paid_orders", Map.of("\"consistency\": \"ONE\",",
                "\"consistency\": \"ONE\", \"maxBatchBytes\": 51200,"));
        List<RowSink.Write> writes = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            writes.add(sink.prepare(record(i), Map.of("order_id", "o" + i, "amount", 1.0, "customer", "c".repeat(5080),
                    "seq", (long) i), i + 1));
        }
        // The precondition: the same rows as one request are refused by the node.
        CqlSession s = cassandra.session();
        PreparedStatement insert = s.prepare("INSERT INTO " + ks + ".paid_orders (order_id, amount, customer, seq)"
                + " VALUES (?, ?, ?, ?) USING TIMESTAMP ?");
        BatchStatement batch = BatchStatement.newInstance(com.datastax.oss.driver.api.core.cql.DefaultBatchType.UNLOGGED);
        for (int i = 0; i < 10; i++) {
            batch = batch.add(insert.bind("o" + i, 1.0, "c".repeat(5080), (long) i, (long) i + 1));
        }
        assertThat(UnloggedBatches.bytes(insert.bind("o0", 1.0, "c".repeat(5080), 0L, 1L)) * 10)
                .as("the sink's count of the batch").isLessThanOrEqualTo(51200);
        BatchStatement refused = batch;
        assertThatThrownBy(() -> s.execute(refused)).hasMessageContaining("Batch too large");

        assertThat(sink.writeAll(writes, QUIET)).isEmpty();
        assertThat(s.execute("SELECT count(*) FROM " + ks + ".paid_orders").one().getLong(0)).isEqualTo(10);
    }

    /**
     * A refusal that is not the record's fault (the table dropped under a running job) is no bad
     * record: the sink fails the batch with an error naming the table, the record and Cassandra's
     * words, which the worker treats as permanent.
     */
    @Test
    void aWriteToADroppedTableFailsNamingTheTableAndTheRecord(CassandraNode cassandra) throws BadRowException {
        String ks = cassandra.createKeyspace("dropped");
        CqlSession s = cassandra.session();
        s.execute(OrderStream.createTable(ks, "paid_orders"));
        CassandraSink sink = open(cassandra, ks, "paid_orders", Map.of());
        RowSink.Write write = sink.prepare(record(7), Map.of("order_id", "o1", "amount", 1.0, "customer", "c", "seq", 1L), 1);
        s.execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance("DROP TABLE " + ks + ".paid_orders")
                .setTimeout(java.time.Duration.ofSeconds(60)));

        assertThatThrownBy(() -> sink.writeAll(List.of(write), QUIET)).isInstanceOf(SinkException.class)
                .hasMessageStartingWith("Cassandra refused a write to " + ks + ".paid_orders (the row of record t-0 offset 7, ")
                .satisfies(e -> assertThat(FailureKind.of(e)).isEqualTo(FailureKind.PERMANENT));
    }

    private static int rows(Statement<?> request) {
        return request instanceof BatchStatement batch ? batch.size() : 1;
    }

    private static long partitions(Statement<?> request) {
        if (!(request instanceof BatchStatement batch)) {
            return 1;
        }
        List<java.nio.ByteBuffer> keys = new ArrayList<>();
        batch.forEach(st -> keys.add(((BoundStatement) st).getRoutingKey()));
        return keys.stream().distinct().count();
    }

    private static CassandraSink open(CassandraNode cassandra, String ks, String table, Map<String, String> edits) {
        String json = TextEdits.apply(TestConfigs.orders("it/sink", "127.0.0.1:1", "t", "127.0.0.1:1", "dc", ks, table), edits);
        JobConfig config = JobConfigs.parse(json);
        return CassandraSink.open(cassandra.session(), config, () -> false);
    }

    private static SourceRecord record(long offset) {
        return new SourceRecord("t", 0, offset, 0, null, "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }
}
