package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.fasterxml.jackson.databind.JsonNode;

import io.oncestream.engine.config.TestConfigs;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraCluster;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * A worker writing at LOCAL_QUORUM to a keyspace of replication factor 3 on a real 3-node
 * cluster, records arriving all along: with one node down it goes on; with two down it waits
 * ({@code WAITING_FOR_SINK}, sink unavailable) and commits nothing; when one is back it resumes
 * by itself. The consumer group's offsets are never ahead of the table. Node 3, down since the
 * first fault, then comes back with hints pending and nothing else writing: once the others
 * have delivered their hints, the table read at ALL is exact, and so is node 3 alone (the table
 * has no read repair, so what node 3 missed reached it as hints). docs/protocol.md §12.
 */
@ExtendWith(KafkaExtension.class)
class CassandraClusterIT {

    private static final String TABLE = "paid_orders";

    private static CassandraCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = CassandraCluster.start();
        System.out.printf("[cluster] %d nodes started in %.1f s%n", cluster.nodes().size(), cluster.startTime().toMillis() / 1000.0);
    }

    @AfterAll
    static void deleteCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void atLocalQuorumOneNodeDownGoesOnTwoDownWaitsAndHintsLeaveEveryReplicaExact(KafkaBroker kafka, @TempDir Path dir)
            throws Exception {
        String topic = kafka.createTopic("cluster", 3);
        String keyspace = "cluster_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String job = "it/cluster-" + keyspace.substring(8);
        OrderStream orders = new OrderStream(61, 150);
        try (CqlSession session = cluster.newSession()) {
            session.execute("CREATE KEYSPACE " + keyspace
                    + " WITH replication = {'class': 'NetworkTopologyStrategy', '" + cluster.datacenter() + "': 3}");
            // No read repair: a read never fixes a replica, so only writes and hints fill node 3.
            session.execute(OrderStream.createTable(keyspace, TABLE) + " WITH read_repair = 'NONE'");
        }
        Path config = dir.resolve("job.json");
        Files.writeString(config, clusterConfig(job, kafka.bootstrapServers(), topic, keyspace));
        Producing producing = new Producing(kafka, topic, orders);

        try (CqlSession session = cluster.newSession();
                WorkerProcess worker = WorkerProcess.start(config, dir.resolve("checkpoint"), 0, Map.of(), dir.resolve("worker.log"))) {
            Awaits.until(Duration.ofMinutes(3), "the worker to commit its first 300 records", () -> committed(worker) >= 300);
            Phases phases = new Phases();

            // (a) One node of three down: LOCAL_QUORUM (2) is still there; batches go on committing.
            cluster.stopNode(3);
            long batchAtStop = batchId(worker);
            Awaits.until(Duration.ofMinutes(3), "5 batches committed with node 3 down", () -> batchId(worker) >= batchAtStop + 5);
            assertGroupNotAheadOfTable(kafka, job, session, keyspace, orders, producing);
            phases.done("(a) node 3 down, batches " + batchAtStop + " -> " + batchId(worker));

            // (b) Two down: no quorum. The worker waits, says why, and commits nothing while records arrive.
            cluster.stopNode(2);
            Awaits.until(Duration.ofMinutes(2), "WAITING_FOR_SINK in /progress with nodes 2 and 3 down", () -> {
                JsonNode p = worker.progress();
                return p != null && p.path("state").asText().equals("WAITING_FOR_SINK");
            });
            JsonNode waiting = worker.progress();
            List<Long> commitsWhenWaiting = new CheckpointOnDisk(dir.resolve("checkpoint")).batchIds("commits");
            long latestWhenWaiting = latest(waiting);
            Awaits.until(Duration.ofMinutes(2), "200 more records in Kafka as the waiting worker sees it",
                    () -> latest(worker.progress()) >= latestWhenWaiting + 200);
            JsonNode during = worker.progress();
            System.out.println("[cluster] two nodes down: state " + during.path("state").asText() + ", lastError "
                    + during.path("lastError").asText());
            assertThat(during.path("state").asText()).isEqualTo("WAITING_FOR_SINK");
            assertThat(during.path("sinkAvailable").asBoolean()).isFalse();
            assertThat(during.path("lastError").asText()).startsWith("Cassandra: ").contains("consistency LOCAL_QUORUM");
            assertThat(during.path("batchId").asLong()).isEqualTo(waiting.path("batchId").asLong());
            assertThat(new CheckpointOnDisk(dir.resolve("checkpoint")).batchIds("commits"))
                    .as("nothing is committed without a quorum").isEqualTo(commitsWhenWaiting);
            phases.done("(b) nodes 2 and 3 down, waiting at batch " + waiting.path("batchId").asLong());

            // Node 2 back: a quorum again, and the worker resumes by itself; node 3 stays down.
            cluster.startNode(2);
            Awaits.until(Duration.ofMinutes(3), "the worker committing again with nodes 1 and 2", () -> {
                JsonNode p = worker.progress();
                return p != null && p.path("sinkAvailable").asBoolean()
                        && p.path("batchId").asLong() > waiting.path("batchId").asLong();
            });
            assertGroupNotAheadOfTable(kafka, job, session, keyspace, orders, producing);
            phases.done("(b) node 2 restarted, the worker resumed at batch " + batchId(worker));

            long produced = producing.stop();
            Awaits.until(Duration.ofMinutes(3), "the worker to commit all " + produced + " records",
                    () -> committed(worker) >= produced);
            assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM (128 + 15)").isEqualTo(143);
            assertThat(worker.log()).contains("writes failed, retrying");
            Map<TopicPartition, Long> ends = EngineCrashIT.endOffsets(kafka, topic);
            Map<TopicPartition, OffsetAndMetadata> group = EngineCrashIT.groupOffsets(kafka, "oncestream-" + job.replace('/', '.'));
            ends.forEach((tp, end) -> assertThat(group.get(tp).offset()).as("group offset of " + tp).isEqualTo(end));
            phases.done("all " + produced + " records committed with node 3 down");

            // (c) Nodes 1 and 2 hold hints for node 3 of every write it missed. A restart writes
            // them all to files (a node drains on SIGTERM), so that "no hint files left" is "every
            // hint delivered". Nothing writes the table any more: node 3 can catch up by hints only.
            for (int n = 1; n <= 2; n++) {
                cluster.stopNode(n);
                cluster.startNode(n);
            }
            int pending1 = pendingHintFiles(session, 1);
            int pending2 = pendingHintFiles(session, 2);
            assertThat(pending1 + pending2).as("hint files on nodes 1 and 2 for node 3").isPositive();
            phases.done("nodes 1 and 2 restarted, hint files pending: " + pending1 + " and " + pending2);
            cluster.startNode(3);
            for (int n = 1; n <= 2; n++) {
                int node = n;
                Awaits.until(Duration.ofMinutes(3), "node " + node + " delivering its hints to node 3",
                        () -> pendingHintFiles(session, node) == 0);
            }
            phases.done("node 3 restarted, hints delivered");
            assertThat(rows(session, keyspace, ConsistencyLevel.ALL)).as("the table read at ALL").isEqualTo(orders.expectedRows());
        }

        // Node 3 alone: every row it missed while down came to it as a hint (no read repaired it).
        cluster.stopNode(1);
        cluster.stopNode(2);
        try (CqlSession node3 = cluster.newSession(3)) {
            assertThat(rows(node3, keyspace, ConsistencyLevel.ONE)).as("node 3 alone").isEqualTo(orders.expectedRows());
        }
    }

    /**
     * The consumer group's offsets are never ahead of the table: for every record below them, the
     * table (read at QUORUM with two nodes up: it sees every acknowledged write) holds that
     * record's row or a later one of its order.
     */
    private static void assertGroupNotAheadOfTable(KafkaBroker kafka, String job, CqlSession session, String keyspace,
            OrderStream orders, Producing producing) {
        Map<Integer, Long> group = EngineCrashIT.groupOffsets(kafka, "oncestream-" + job.replace('/', '.')).entrySet().stream()
                .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset()));
        Map<String, String> table = rows(session, keyspace, ConsistencyLevel.QUORUM);
        Map<String, String> expected;
        synchronized (orders) {
            expected = orders.expectedRowsBefore(group);
        }
        assertThat(group).as("group offsets").isNotEmpty();
        expected.forEach((id, row) -> {
            assertThat(table).as("group offsets " + group).containsKey(id);
            assertThat(seq(table.get(id))).as("order " + id + " below group offsets " + group).isGreaterThanOrEqualTo(seq(row));
        });
        producing.check();
    }

    /** Hint files node {@code n} holds, once the session reaches it again after a restart. */
    private static int pendingHintFiles(CqlSession session, int n) {
        AtomicReference<Integer> files = new AtomicReference<>();
        Awaits.until(Duration.ofMinutes(1), "node " + n + " answering the session", () -> {
            try {
                files.set(cluster.pendingHintFiles(session, n));
                return true;
            } catch (RuntimeException notReachedYet) {
                return false;
            }
        });
        return files.get();
    }

    private static long seq(String row) {
        return Long.parseLong(row.substring(row.lastIndexOf(' ') + 1));
    }

    private static Map<String, String> rows(CqlSession session, String keyspace, ConsistencyLevel level) {
        Map<String, String> rows = new java.util.TreeMap<>();
        SimpleStatement select = SimpleStatement.newInstance("SELECT order_id, amount, customer, seq FROM " + keyspace + "." + TABLE)
                .setConsistencyLevel(level);
        for (Row r : session.execute(select)) {
            rows.put(r.getString("order_id"), r.getDouble("amount") + " " + r.getString("customer") + " " + r.getLong("seq"));
        }
        return rows;
    }

    private String clusterConfig(String job, String bootstrap, String topic, String keyspace) {
        String node1 = cluster.node(1).getHostString() + ":" + cluster.node(1).getPort();
        String all = cluster.nodes().stream().map(a -> "\"" + a.getHostString() + ":" + a.getPort() + "\"")
                .collect(Collectors.joining(", "));
        String json = TestConfigs.orders(job, bootstrap, topic, node1, cluster.datacenter(), keyspace, TABLE);
        String edited = json.replace("\"contactPoints\": [\"" + node1 + "\"]", "\"contactPoints\": [" + all + "]")
                .replace("\"consistency\": \"ONE\"", "\"consistency\": \"LOCAL_QUORUM\"");
        assertThat(edited).contains("\"consistency\": \"LOCAL_QUORUM\"").contains(all);
        return edited;
    }

    private static long batchId(WorkerProcess worker) {
        JsonNode p = worker.progress();
        return p == null ? -1 : p.path("batchId").asLong();
    }

    /** Records committed by the worker, over all its partitions. */
    private static long committed(WorkerProcess worker) {
        JsonNode p = worker.progress();
        long committed = 0;
        if (p != null) {
            for (JsonNode partition : p.path("partitions")) {
                committed += partition.path("committed").asLong();
            }
        }
        return committed;
    }

    /** The end offsets the worker last saw, summed. */
    private static long latest(JsonNode progress) {
        long latest = 0;
        if (progress != null) {
            for (JsonNode partition : progress.path("partitions")) {
                latest += partition.path("latest").asLong();
            }
        }
        return latest;
    }

    /** Order events produced steadily, 60 about every 400 ms, until stopped. */
    private static final class Producing {

        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final OrderStream orders;
        private final Thread thread;

        Producing(KafkaBroker kafka, String topic, OrderStream orders) {
            this.orders = orders;
            this.thread = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        synchronized (orders) {
                            orders.produce(kafka, topic, 60, 0);
                        }
                        Thread.sleep(400); // the producer's pace, not a synchronization
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "producing-orders");
            thread.setDaemon(true);
            thread.start();
        }

        void check() {
            if (failure.get() != null) {
                throw new AssertionError("producing failed", failure.get());
            }
        }

        /** Stops producing and returns how many records were produced. */
        long stop() throws InterruptedException {
            stop.set(true);
            thread.join(Duration.ofMinutes(1).toMillis());
            check();
            synchronized (orders) {
                return orders.produced().size();
            }
        }
    }

    /** Prints how long each phase took, for the run's notes. */
    private static final class Phases {

        private long since = System.nanoTime();

        void done(String what) {
            long now = System.nanoTime();
            System.out.printf("[cluster] %s: %.1f s%n", what, (now - since) / 1e9);
            since = now;
        }
    }
}
