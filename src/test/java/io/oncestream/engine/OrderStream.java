package io.oncestream.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;

import io.oncestream.testing.KafkaBroker;

/**
 * Order events for engine tests, and the table they must produce, computed here in plain Java
 * (no CEL, no engine code): for each order id, the last record by offset that passes
 * {@code status == 'PAID' && amount > 100}. Orders are keyed by id, so all events of an order
 * land in one partition, in the order they were produced.
 */
public final class OrderStream {

    /** One produced record and where Kafka put it. */
    public record Produced(String id, String status, double amount, String customer, long seq, String json, boolean bad,
            int partition, long offset) {
    }

    private final List<Produced> produced = new ArrayList<>();
    private final Random random;
    private final int orders;
    private long seq;

    public OrderStream(long seed, int orders) {
        this.random = new Random(seed);
        this.orders = orders;
    }

    /** CQL of the sink table the job's columns fill. */
    public static String createTable(String keyspace, String table) {
        return "CREATE TABLE " + keyspace + "." + table
                + " (order_id text PRIMARY KEY, amount double, customer text, seq bigint)";
    }

    /**
     * Produces {@code count} order events; with {@code badEvery > 0}, every {@code badEvery}-th is
     * bad: in turn malformed JSON, without the customer, without the amount, or with the amount
     * as a string. With {@code badEvery > 1}, the order midway between two bad ones lacks a field
     * the filter reads but is not bad: the filter's other operand is false, and decides it.
     */
    public List<Produced> produce(KafkaBroker kafka, String topic, int count, int badEvery) {
        return produce(kafka, topic, count, badEvery, null);
    }

    /**
     * {@link #produce(KafkaBroker, String, int, int)} with each record's Kafka timestamp
     * ({@code CreateTime}) given by {@code timestampOfSeq} from its sequence number; null lets
     * the producer set the time of sending.
     */
    public List<Produced> produce(KafkaBroker kafka, String topic, int count, int badEvery,
            java.util.function.LongUnaryOperator timestampOfSeq) {
        List<Produced> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long s = seq++;
            String id = "o" + random.nextInt(orders);
            String status = random.nextInt(3) == 0 ? "NEW" : "PAID";
            double amount = random.nextBoolean() ? 50 + random.nextInt(200) : Math.round((50 + random.nextDouble() * 200) * 100) / 100.0;
            String customer = "c" + random.nextInt(1000);
            boolean bad = badEvery > 0 && s % badEvery == badEvery - 1;
            long kind = badEvery > 0 ? s / badEvery % 4 : 0;
            String json;
            if (bad && kind == 0) {
                json = "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"amount\": "; // malformed
            } else if (bad && kind == 1) {
                // No "customer": the filter passes, the column expression fails.
                json = "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"amount\": 500, \"seq\": " + s + "}";
            } else if (bad && kind == 2) {
                // No "amount": the filter's second operand, needed since the first holds, fails.
                json = "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"customer\": {\"name\": \"" + customer
                        + "\"}, \"seq\": " + s + "}";
            } else if (bad) {
                // The amount as a string: no comparison of a string with a number.
                json = "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"amount\": \"500\", \"customer\": {\"name\": \""
                        + customer + "\"}, \"seq\": " + s + "}";
            } else if (badEvery > 1 && s % badEvery == badEvery / 2) {
                // A filter field missing, but the other operand of && is false, which decides
                // it as CEL does: filtered out, not a bad record.
                status = "NEW";
                amount = 50;
                json = kind % 2 == 0
                        ? "{\"id\": \"" + id + "\", \"status\": \"NEW\", \"seq\": " + s + "}"
                        : "{\"id\": \"" + id + "\", \"amount\": 50, \"seq\": " + s + "}";
            } else {
                json = "{\"id\": \"" + id + "\", \"status\": \"" + status + "\", \"amount\": " + amountJson(amount)
                        + ", \"customer\": {\"name\": \"" + customer + "\"}, \"seq\": " + s + "}";
            }
            batch.add(new Produced(id, status, amount, customer, s, json, bad, -1, -1));
        }
        return send(kafka, topic, Map.of("linger.ms", 5), batch,
                p -> timestampOfSeq == null ? null : timestampOfSeq.applyAsLong(p.seq()));
    }

    /**
     * Tombstones (null values) for {@code ids}, keyed like the orders, so each lands in its id's
     * partition after the orders before it. {@link #expectedRows()} applies them as a job with
     * {@code tombstones: delete} does: the row goes, until a later order of the id.
     */
    public List<Produced> produceTombstones(KafkaBroker kafka, String topic, List<String> ids) {
        List<Produced> batch = new ArrayList<>();
        for (String id : ids) {
            batch.add(new Produced(id, "TOMBSTONE", 0, null, seq++, null, false, -1, -1));
        }
        return send(kafka, topic, Map.of("linger.ms", 5), batch, p -> null);
    }

    /**
     * Large records, for each of {@code sizes} in turn: a positive size is a paid order of 500
     * (kept by the filter) whose customer name is about that many bytes; a negative one a
     * malformed record (a bad record) of about that many bytes. Producer and topic must allow
     * records of the largest size ({@code max.request.size}, {@code max.message.bytes}).
     */
    public List<Produced> produceLarge(KafkaBroker kafka, String topic, List<Integer> sizes) {
        List<Produced> batch = new ArrayList<>();
        for (int size : sizes) {
            long s = seq++;
            String id = "o" + random.nextInt(orders);
            String padding = "x".repeat(Math.abs(size));
            String customer = "c" + s + "-" + padding;
            String json = size >= 0
                    ? "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"amount\": 500, \"customer\": {\"name\": \""
                            + customer + "\"}, \"seq\": " + s + "}"
                    : "{\"id\": \"" + id + "\", \"pad\": \"" + padding; // malformed
            batch.add(new Produced(id, "PAID", 500, customer, s, json, size < 0, -1, -1));
        }
        int largest = sizes.stream().mapToInt(Math::abs).max().orElse(0);
        return send(kafka, topic, Map.of("linger.ms", 5, "max.request.size", largest + (1 << 20),
                "buffer.memory", 4L * largest + (32 << 20), "compression.type", "none"), batch, p -> null);
    }

    /**
     * Sends {@code records} in order (keyed by id, the value their JSON or null, the timestamp
     * {@code timestampOf} gives or the producer's), waits for every acknowledgement, and keeps
     * them with the partition and offset Kafka gave each.
     */
    private List<Produced> send(KafkaBroker kafka, String topic, Map<String, Object> settings, List<Produced> records,
            java.util.function.Function<Produced, Long> timestampOf) {
        List<Produced> sentRecords = new ArrayList<>(records.size());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.producerProperties(settings))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
            for (Produced p : records) {
                sent.add(producer.send(new ProducerRecord<>(topic, null, timestampOf.apply(p), p.id(), p.json())));
            }
            producer.flush();
            for (int i = 0; i < records.size(); i++) {
                RecordMetadata m = sent.get(i).get();
                Produced p = records.get(i);
                sentRecords.add(new Produced(p.id(), p.status(), p.amount(), p.customer(), p.seq(), p.json(), p.bad(),
                        m.partition(), m.offset()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("producing to " + topic + " failed", e.getCause());
        }
        produced.addAll(sentRecords);
        return sentRecords;
    }

    /** Treats the record at {@code offset} of {@code partition} as a bad record (one Cassandra refuses, say). */
    public void markBad(int partition, long offset) {
        for (int i = 0; i < produced.size(); i++) {
            Produced p = produced.get(i);
            if (p.partition() == partition && p.offset() == offset) {
                produced.set(i, new Produced(p.id(), p.status(), p.amount(), p.customer(), p.seq(), p.json(), true,
                        p.partition(), p.offset()));
                return;
            }
        }
        throw new IllegalArgumentException("no record at " + partition + "@" + offset);
    }

    private static String amountJson(double amount) {
        return amount == Math.rint(amount) ? String.valueOf((long) amount) : String.valueOf(amount);
    }

    public List<Produced> produced() {
        return produced;
    }

    /** The rows the table must hold: {@code order_id -> "amount customer seq"}. */
    public Map<String, String> expectedRows() {
        return expectedRowsBefore(Long.MAX_VALUE);
    }

    /** The rows of the records with offsets below {@code endOffset} only (a single-partition topic's committed prefix). */
    public Map<String, String> expectedRowsBefore(long endOffset) {
        return expectedRowsOf(produced.stream().filter(p -> p.offset() < endOffset).toList());
    }

    /** The rows of the records below the end offset of their partition in {@code ends} (a prefix of every partition). */
    public Map<String, String> expectedRowsBefore(Map<Integer, Long> ends) {
        return expectedRowsOf(produced.stream().filter(p -> p.offset() < ends.getOrDefault(p.partition(), 0L)).toList());
    }

    private static Map<String, String> expectedRowsOf(List<Produced> records) {
        List<Produced> inOffsetOrder = new ArrayList<>(records);
        inOffsetOrder.sort((a, b) -> a.partition() != b.partition() ? Integer.compare(a.partition(), b.partition())
                : Long.compare(a.offset(), b.offset()));
        Map<String, String> rows = new TreeMap<>();
        for (Produced p : inOffsetOrder) {
            if (p.json() == null) {
                rows.remove(p.id());
            } else if (!p.bad() && p.status().equals("PAID") && p.amount() > 100) {
                rows.put(p.id(), describe(p.amount(), p.customer(), p.seq()));
            }
        }
        return rows;
    }

    /** {@code topic-partition@offset} of every bad record. */
    public List<String> expectedDeadLetters(String topic) {
        return produced.stream().filter(Produced::bad).map(p -> topic + "-" + p.partition() + "@" + p.offset()).sorted().toList();
    }

    /** The table's rows in the form of {@link #expectedRows()}. */
    public static Map<String, String> actualRows(CqlSession session, String keyspace, String table) {
        Map<String, String> rows = new TreeMap<>();
        for (Row r : session.execute("SELECT order_id, amount, customer, seq FROM " + keyspace + "." + table)) {
            rows.put(r.getString("order_id"), describe(r.getDouble("amount"), r.getString("customer"), r.getLong("seq")));
        }
        return rows;
    }

    /** {@code topic-partition@offset} of every row in the dead-letter table. */
    public static List<String> actualDeadLetters(CqlSession session, String keyspace, String table) {
        List<String> rows = new ArrayList<>();
        for (Row r : session.execute("SELECT kafka_topic, kafka_partition, kafka_offset, error FROM " + keyspace + "." + table)) {
            if (r.getString("error") == null || r.getString("error").isBlank()) {
                throw new AssertionError("dead letter without an error: " + r.getFormattedContents());
            }
            rows.add(r.getString("kafka_topic") + "-" + r.getInt("kafka_partition") + "@" + r.getLong("kafka_offset"));
        }
        rows.sort(null);
        return rows;
    }

    private static String describe(double amount, String customer, long seq) {
        return amount + " " + describeCustomer(customer) + " " + seq;
    }

    /** A long customer name (a large record's) as its start, length and digest, so that a failed comparison stays readable. */
    public static String describeCustomer(String customer) {
        if (customer == null || customer.length() <= 100) {
            return customer;
        }
        return customer.substring(0, 20) + "...(" + customer.length() + " chars, sha-256 "
                + java.util.HexFormat.of().formatHex(sha256(customer)).substring(0, 16) + ")";
    }

    private static byte[] sha256(String text) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Counts per id of records produced, to show that keys repeat within and across batches. */
    public Map<String, Integer> eventsPerOrder() {
        Map<String, Integer> counts = new HashMap<>();
        produced.forEach(p -> counts.merge(p.id(), 1, Integer::sum));
        return counts;
    }
}
