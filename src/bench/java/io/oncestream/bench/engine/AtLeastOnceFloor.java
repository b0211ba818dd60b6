package io.oncestream.bench.engine;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.TreeMap;

import com.datastax.oss.driver.api.core.CqlSession;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.kafka.KafkaRecordSource;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.TransformResult;

/**
 * The latency side by side's floor: the simplest correct at-least-once loop over the same job,
 * as a process of its own ({@code java -cp ... AtLeastOnceFloor job.json}). It polls a
 * KafkaConsumer with the worker's consumer settings
 * ({@link KafkaRecordSource#consumerProperties}) over every partition of the job's topic,
 * filters and maps each record with the job's compiled expressions ({@link RecordTransformer},
 * as the worker compiles them), writes the rows of each poll the raw loader's way
 * ({@link RawWrites}: the same statement, grouping and writes in flight), and once every write
 * is acknowledged commits the poll's offsets with {@code commitSync}. No write-ahead log, no
 * commit log, no deterministic write timestamps: what is left when exactly-once is taken away.
 *
 * <p>After each poll's commit it prints one line, {@code floor-batch <ack ms> <rows>
 * <partition>:<start>-<end>,...}: the wall-clock time right after the last write's
 * acknowledgement (as the engine's commit log records its batches' {@code committedAtMs}) and
 * the offsets the poll held, from which {@link RecordLatencies} computes each record's latency.
 */
public final class AtLeastOnceFloor {

    /** The line printed once the loop is connected, assigned and about to poll. */
    static final String READY = "floor ready";
    /** How each batch's line starts. */
    static final String BATCH = "floor-batch ";

    private AtLeastOnceFloor() {
    }

    public static void main(String[] args) throws Exception {
        io.oncestream.worker.WorkerLogging.install(); // the worker's log setup: library logging costs the same
        if (args.length != 1) {
            System.err.println("usage: AtLeastOnceFloor <job.json, as a worker reads it>");
            System.exit(2);
        }
        JobConfig config = JobConfigs.read(Path.of(args[0]));
        RecordTransformer transformer = RecordTransformer.compile(config);
        Properties props = KafkaRecordSource.consumerProperties(config.source(), 0);
        // The worker never resets (its checkpoint says where to read); this loop has only the
        // group's offsets, none on a new topic: it starts at the topic's beginning.
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (CqlSession session = CassandraSessions.open(config.sink(), null, null);
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                        new ByteArrayDeserializer())) {
            RawWrites writes = new RawWrites(session, config.sink().keyspace(), config.sink().table(), config.sink());
            // Assigned, not subscribed, as the worker is: no group rebalance stands between a record and its write.
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : config.source().topics()) {
                consumer.partitionsFor(topic).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            }
            consumer.assign(partitions);
            partitions.forEach(consumer::position); // where each partition starts, looked up before the first poll
            PrintStream out = System.out;
            out.println(READY);
            out.flush();
            long[] lastTimestamp = {0};
            while (true) {
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(500));
                if (polled.isEmpty()) {
                    continue;
                }
                List<Object[]> rows = new ArrayList<>(polled.count());
                Map<Integer, long[]> ranges = new TreeMap<>();
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    TransformResult result = transformer.apply(KafkaRecordSource.toSourceRecord(r));
                    if (result instanceof TransformResult.Row row) {
                        rows.add(order(row.columns()));
                    } else if (result instanceof TransformResult.Bad bad) {
                        throw new IllegalStateException("record " + r.topic() + "-" + r.partition() + " offset " + r.offset() + ": "
                                + bad.reason());
                    }
                    long[] range = ranges.computeIfAbsent(r.partition(), p -> new long[] {r.offset(), r.offset()});
                    range[0] = Math.min(range[0], r.offset());
                    range[1] = Math.max(range[1], r.offset() + 1);
                }
                // The client's clock, made to increase, as the driver's default timestamp generator does.
                writes.write(rows, () -> lastTimestamp[0] = Math.max(lastTimestamp[0] + 1, System.currentTimeMillis() * 1000));
                long ackMs = System.currentTimeMillis();
                consumer.commitSync();
                out.println(batchLine(ackMs, rows.size(), ranges));
                out.flush();
            }
        }
    }

    /** {customer, order id, amount, seq} of the benchmark's columns, typed as {@link RawWrites} binds them. */
    private static Object[] order(Map<String, Object> columns) {
        return new Object[] {columns.get("customer"), columns.get("order_id"), ((Number) columns.get("amount")).doubleValue(),
            ((Number) columns.get("seq")).longValue()};
    }

    /** A batch's line: {@code floor-batch <ack ms> <rows> <partition>:<start>-<end>,...}. */
    static String batchLine(long ackMs, int rows, Map<Integer, long[]> ranges) {
        StringJoiner offsets = new StringJoiner(",");
        ranges.forEach((p, r) -> offsets.add(p + ":" + r[0] + "-" + r[1]));
        return BATCH + ackMs + " " + rows + " " + offsets;
    }

    /** A line of {@link #batchLine}, or null for any other line of the floor's output. */
    static RecordLatencies.AckedBatch parseBatchLine(String line) {
        if (!line.startsWith(BATCH)) {
            return null;
        }
        String[] f = line.substring(BATCH.length()).trim().split(" ");
        List<RecordLatencies.Range> ranges = new ArrayList<>();
        if (f.length > 2) {
            for (String range : f[2].split(",")) {
                int colon = range.indexOf(':');
                int dash = range.indexOf('-', colon);
                ranges.add(new RecordLatencies.Range(Integer.parseInt(range.substring(0, colon)),
                        Long.parseLong(range.substring(colon + 1, dash)), Long.parseLong(range.substring(dash + 1))));
            }
        }
        return new RecordLatencies.AckedBatch(Long.parseLong(f[0]), ranges);
    }

    /** The rows a line of {@link #batchLine} says were written, 0 for any other line. */
    static long rowsOf(String line) {
        return line.startsWith(BATCH) ? Long.parseLong(line.substring(BATCH.length()).split(" ")[1]) : 0;
    }
}
