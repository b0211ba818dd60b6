package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

import com.datastax.oss.driver.api.core.cql.Row;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.engine.OrderStream;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.TextEdits;

/**
 * One StreamJob of an end-to-end test: the example manifest of deploy/examples/paid-orders.yaml
 * pointed at a topic, keyspace and namespace of its own, the order events produced to it, and
 * the table those events must leave, computed independently in plain Java ({@link OrderStream}).
 */
final class E2EJob {

    static final String EXAMPLE = "deploy/examples/paid-orders.yaml";

    final KubeCluster kube;
    final KafkaBroker kafka;
    final CassandraNode cassandra;
    final String namespace;
    final String name = "paid-orders";
    final String topic;
    final String keyspace;
    final String table = "paid_orders";
    final OrderStream orders;
    /** Whether the job maps {@code seq} too (a column the example does not have). */
    final boolean withSeq;

    private static final HttpClient PROGRESS_HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(1)).build();
    private static final ObjectMapper PROGRESS_JSON = new ObjectMapper();

    private static final List<String> NAMESPACES = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Deletes the namespaces of every job made so far (their workers with them), so that the
     * next test class does not share the node's two cores with jobs nobody watches any more.
     */
    static void deleteAll(KubeCluster kube) {
        kube.deleteNamespaces(Duration.ofSeconds(180), List.copyOf(NAMESPACES));
        NAMESPACES.clear();
    }

    private E2EJob(KubeCluster kube, KafkaBroker kafka, CassandraNode cassandra, String namespace, String topic,
            String keyspace, long seed, int distinctOrders, boolean withSeq) {
        this.kube = kube;
        this.kafka = kafka;
        this.cassandra = cassandra;
        this.namespace = namespace;
        this.topic = topic;
        this.keyspace = keyspace;
        this.withSeq = withSeq;
        this.orders = new OrderStream(seed, distinctOrders);
        NAMESPACES.add(namespace);
    }

    /** A job of its own: namespace, topic and keyspace named after {@code prefix}; its table maps {@code seq} too. */
    static E2EJob own(KubeCluster kube, KafkaBroker kafka, CassandraNode cassandra, String prefix, int partitions,
            int distinctOrders) {
        return own(kube, kafka, cassandra, prefix, partitions, distinctOrders, Map.of());
    }

    /** {@link #own(KubeCluster, KafkaBroker, CassandraNode, String, int, int)} with topic-level settings. */
    static E2EJob own(KubeCluster kube, KafkaBroker kafka, CassandraNode cassandra, String prefix, int partitions,
            int distinctOrders, Map<String, String> topicConfigs) {
        String keyspace = cassandra.createKeyspace(prefix.replace('-', '_'));
        cassandra.session().execute(OrderStream.createTable(keyspace, "paid_orders"));
        return new E2EJob(kube, kafka, cassandra, kube.createNamespace(prefix),
                kafka.createTopic(prefix, partitions, topicConfigs), keyspace, prefix.hashCode(), distinctOrders, true);
    }

    /** The example exactly as it is: topic {@code orders} and the table {@code shop.paid_orders} it names. */
    static E2EJob example(KubeCluster kube, KafkaBroker kafka, CassandraNode cassandra, int partitions, int distinctOrders) {
        freshTopic(kafka, "orders", partitions);
        cassandra.session().execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS shop")
                .setTimeout(Duration.ofSeconds(60)));
        cassandra.session().execute("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        cassandra.session().execute("CREATE TABLE shop.paid_orders (order_id text PRIMARY KEY, amount double, customer text)");
        return new E2EJob(kube, kafka, cassandra, kube.createNamespace("e2e-example"), "orders", "shop", 42, distinctOrders, false);
    }

    /**
     * Creates {@code topic} with a fixed name, as an example names it, deleting it first if it
     * exists: services kept running between test runs may still hold the last run's.
     */
    static void freshTopic(KafkaBroker kafka, String topic, int partitions) {
        try {
            var admin = kafka.admin();
            if (admin.listTopics().names().get().contains(topic)) {
                admin.deleteTopics(List.of(topic)).all().get();
                Awaits.until(Duration.ofSeconds(60), "topic " + topic + " to be deleted", () -> {
                    try {
                        return !admin.listTopics().names().get().contains(topic);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            Awaits.until(Duration.ofSeconds(60), "topic " + topic + " to be created", () -> {
                try {
                    admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, partitions, (short) 1))).all().get();
                    kafka.awaitLeaders(topic);
                    return true;
                } catch (Exception e) {
                    return false; // still being deleted
                }
            });
        } catch (Exception e) {
            throw new IllegalStateException("cannot create topic " + topic, e);
        }
    }

    /** The example manifest, pointed at this job's topic and keyspace, with {@code edits} (each must apply). */
    String manifest(Map<String, String> edits) {
        Map<String, String> all = new LinkedHashMap<>();
        if (!topic.equals("orders")) {
            all.put("topics: [orders]", "topics: [" + topic + "]");
            all.put("keyspace: shop", "keyspace: " + keyspace);
        }
        if (withSeq) {
            all.put("        customer: value.customer.name\n", "        customer: value.customer.name\n        seq: value.seq\n");
        }
        all.putAll(edits);
        return TextEdits.apply(read(EXAMPLE), all);
    }

    /** Edits of the example for fault tests: batches of at most 500 records, every 300 ms. */
    static final Map<String, String> SHORT_BATCHES = Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 500",
            "interval: 1s", "interval: 300ms");

    /** {@code kubectl apply -n <namespace> -f -} of the edited example. */
    void apply(Map<String, String> edits) {
        kube.kubectl(manifest(edits), "apply", "-n", namespace, "-f", "-").orThrow();
    }

    static String read(String repoFile) {
        try {
            return Files.readString(LocalService.repoDir().resolve(repoFile));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The job's Kubernetes events, as {@code type reason message}. */
    List<String> events() {
        return kube.admin().v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && "StreamJob".equals(e.getInvolvedObject().getKind()))
                .map(e -> e.getType() + " " + e.getReason() + " " + e.getMessage()).toList();
    }

    /** Produces {@code count} order events (thread-safe: one producer at a time). */
    synchronized void produce(int count) {
        orders.produce(kafka, topic, count, 0);
    }

    synchronized int produced() {
        return orders.produced().size();
    }

    /** The rows the table must hold, in the form of {@link #rows()}. */
    synchronized Map<String, String> expectedRows() {
        Map<String, String> rows = new TreeMap<>();
        orders.expectedRows().forEach((id, v) -> rows.put(id, withSeq ? v : v.substring(0, v.lastIndexOf(' '))));
        return rows;
    }

    /**
     * The rows the table must hold when a record of partition {@code p} at an offset below
     * {@code boundary.get(p)} passes if {@code before} says so, and any later one if
     * {@code after} says so: the last passing record of each order, in offset order.
     */
    synchronized Map<String, String> expectedRows(Predicate<OrderStream.Produced> before, Predicate<OrderStream.Produced> after,
            Map<Integer, Long> boundary) {
        List<OrderStream.Produced> inOrder = new java.util.ArrayList<>(orders.produced());
        inOrder.sort(java.util.Comparator.comparingInt(OrderStream.Produced::partition).thenComparingLong(OrderStream.Produced::offset));
        Map<String, String> rows = new TreeMap<>();
        for (OrderStream.Produced p : inOrder) {
            boolean passes = p.offset() < boundary.getOrDefault(p.partition(), Long.MAX_VALUE) ? before.test(p) : after.test(p);
            if (passes && !p.bad()) {
                rows.put(p.id(), p.amount() + " " + p.customer() + (withSeq ? " " + p.seq() : ""));
            }
        }
        return rows;
    }

    /** The table: {@code order_id -> "amount customer[ seq]"}. */
    Map<String, String> rows() {
        Map<String, String> rows = new TreeMap<>();
        String columns = withSeq ? "order_id, amount, customer, seq" : "order_id, amount, customer";
        for (Row r : cassandra.session().execute("SELECT " + columns + " FROM " + keyspace + "." + table)) {
            rows.put(r.getString("order_id"), r.getDouble("amount") + " " + OrderStream.describeCustomer(r.getString("customer"))
                    + (withSeq ? " " + r.getLong("seq") : ""));
        }
        return rows;
    }

    StreamJob job() {
        return kube.admin().resources(StreamJob.class).inNamespace(namespace).withName(name).get();
    }

    StreamJobStatus status() {
        StreamJob job = job();
        return job == null ? null : job.getStatus();
    }


    /** Waits until the status satisfies {@code until}; fails with the last status seen. */
    StreamJobStatus awaitStatus(String what, Duration timeout, Predicate<StreamJobStatus> until) {
        StreamJobStatus[] seen = new StreamJobStatus[1];
        try {
            Awaits.until(timeout, what, () -> {
                seen[0] = status();
                return seen[0] != null && until.test(seen[0]);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last status: " + describe(seen[0]), e);
        }
        return seen[0];
    }

    static String describe(StreamJobStatus s) {
        if (s == null) {
            return "none";
        }
        StringBuilder b = new StringBuilder("phase " + s.phase + ", batch " + s.batchId + ", lag " + s.lag);
        if (s.conditions != null) {
            s.conditions.forEach(c -> b.append(", ").append(c.type).append('=').append(c.status).append(" (").append(c.message).append(')'));
        }
        if (s.workers != null) {
            s.workers.forEach(w -> b.append("; ").append(w.name).append(' ').append(w.state).append(' ').append(w.lastError));
        }
        return b.toString();
    }

    /**
     * Waits until every produced record is committed (lag 0, the consumer group at the end of
     * every partition) and the table equals the expectation; fails with the difference.
     */
    void awaitExactTable(Duration timeout) {
        awaitExactTable(expectedRows(), timeout);
    }

    /** As {@link #awaitExactTable(Duration)}, against {@code expected}. */
    void awaitExactTable(Map<String, String> expected, Duration timeout) {
        assertThat(expected).as("records passing the filter").isNotEmpty();
        Map<String, String>[] actual = new Map[1];
        try {
            Awaits.until(timeout, "the table of " + namespace + "/" + name + " to equal the expectation", () -> {
                actual[0] = rows();
                return actual[0].equals(expected) && groupAtEnd();
            });
        } catch (AssertionError e) {
            Map<String, String> missing = new TreeMap<>(expected);
            actual[0].keySet().forEach(missing::remove);
            Map<String, String> wrong = new TreeMap<>();
            actual[0].forEach((k, v) -> {
                if (!v.equals(expected.get(k))) {
                    wrong.put(k, v + " (expected " + expected.get(k) + ")");
                }
            });
            throw new AssertionError(e.getMessage() + ": " + missing.size() + " rows missing (e.g. "
                    + missing.entrySet().stream().limit(5).toList() + "), " + wrong.size() + " rows wrong or extra (e.g. "
                    + wrong.entrySet().stream().limit(5).toList() + "); status: " + describe(status()), e);
        }
    }

    String groupId() {
        return "oncestream-" + namespace + "." + name;
    }

    /** Committed consumer-group offsets by partition number (only for partitions with a commit). */
    Map<Integer, Long> groupOffsets() {
        try {
            Map<Integer, Long> out = new TreeMap<>();
            kafka.admin().listConsumerGroupOffsets(groupId()).partitionsToOffsetAndMetadata().get()
                    .forEach((tp, om) -> {
                        if (om != null && tp.topic().equals(topic)) {
                            out.put(tp.partition(), om.offset());
                        }
                    });
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the offsets of group " + groupId(), e);
        }
    }

    private synchronized boolean groupAtEnd() {
        Map<Integer, Long> ends = new TreeMap<>();
        orders.produced().forEach(p -> ends.merge(p.partition(), p.offset() + 1, Math::max));
        return groupOffsets().entrySet().containsAll(ends.entrySet());
    }

    /**
     * The exactly-once check of the consumer group at one moment: read its offsets, then the
     * table; every record below a committed offset must already be in the table (the row of its
     * order at least as new as that record, by {@code seq}). Returns the violations.
     */
    List<String> groupOffsetsAheadOfTable() {
        if (!withSeq) {
            throw new IllegalStateException("needs the seq column");
        }
        Map<Integer, Long> committed = groupOffsets();
        Map<String, String> table = rows();
        List<OrderStream.Produced> records;
        synchronized (this) {
            records = List.copyOf(orders.produced());
        }
        Map<String, Long> newestBelowCommit = new TreeMap<>();
        for (OrderStream.Produced p : records) {
            Long end = committed.get(p.partition());
            if (end != null && p.offset() < end && !p.bad() && p.status().equals("PAID") && p.amount() > 100) {
                newestBelowCommit.merge(p.id(), p.seq(), Math::max);
            }
        }
        List<String> violations = new java.util.ArrayList<>();
        newestBelowCommit.forEach((id, seq) -> {
            String row = table.get(id);
            long rowSeq = row == null ? -1 : Long.parseLong(row.substring(row.lastIndexOf(' ') + 1));
            if (rowSeq < seq) {
                violations.add(id + ": group offsets " + committed + " cover seq " + seq + ", table has " + row);
            }
        });
        return violations;
    }

    /** The worker pod {@code name-<index>} as the API server has it now, or null. */
    Pod pod(int index) {
        return kube.admin().pods().inNamespace(namespace).withName(name + "-" + index).get();
    }

    List<Pod> pods() {
        return kube.admin().pods().inNamespace(namespace).withLabels(StreamJobResources.selectorLabels(name)).list().getItems();
    }

    String kubectlGet() {
        return kube.kubectl(null, "get", "sj", name, "-n", namespace).orThrow().stdout();
    }

    /** The worker's {@code /progress} at the pod's address (pods are routed from the machine into the stack), or null. */
    static JsonNode progress(String podIp) {
        try {
            HttpResponse<String> response = PROGRESS_HTTP.send(
                    HttpRequest.newBuilder(URI.create("http://" + podIp + ":8080/progress"))
                    .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? PROGRESS_JSON.readTree(response.body()) : null;
        } catch (java.io.IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
