package io.oncestream.bench.engine;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The latency side by side's producer, in the benchmark's JVM: the benchmark's orders to a new
 * topic at a fixed rate, keeping each record's Kafka timestamp (CreateTime, given by this
 * producer) by partition and offset, as the broker's acknowledgements tell them, for
 * {@link RecordLatencies}.
 */
final class TimedProducer {

    private final BenchSetup setup;
    private final String topic;
    /** Per partition, indexed by offset: the record's Kafka timestamp, 0 until acknowledged. */
    private long[][] timestamps = new long[0][];

    TimedProducer(BenchSetup setup, String topic) {
        this.setup = setup;
        this.topic = topic;
    }

    /** When the measured window opened and closed, and how many records were produced in all. */
    record Window(long fromMs, long toMs, long produced) {
    }

    /**
     * Produces at {@code rate} records/s for {@code warmupSeconds}, then for {@code seconds} of
     * measured window; {@code opened} runs as the window opens (before its first record) and
     * {@code closed} as it closes (after its last). Returns once every record is acknowledged.
     */
    Window produce(double rate, double warmupSeconds, double seconds, Runnable opened, Runnable closed) {
        Random random = new Random(7);
        long total = (long) (rate * (warmupSeconds + seconds));
        long firstMeasured = (long) Math.ceil(rate * warmupSeconds);
        long from = 0;
        long start = System.nanoTime();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(setup.producerProps(1))) {
            for (long i = 0; i < total; i++) {
                // Paced by sleeping, not spinning: a spinning producer would take a whole core of two
                // from the contender, Kafka and Cassandra and inflate the latency it measures.
                long due = start + (long) (i * 1e9 / rate);
                long ahead = due - System.nanoTime();
                if (ahead > 200_000) {
                    LockSupport.parkNanos(ahead);
                }
                if (i == firstMeasured) {
                    opened.run();
                    from = System.currentTimeMillis();
                }
                String v = BenchOrders.json(random, i);
                producer.send(new ProducerRecord<>(topic, BenchOrders.parse(v)[1], v), (metadata, error) -> {
                    if (error == null) {
                        record(metadata.partition(), metadata.offset(), metadata.timestamp());
                    }
                });
            }
            long to = System.currentTimeMillis() + 1; // the window is [from, to): the last record's millisecond is in it
            closed.run();
            producer.flush();
            if (firstMeasured >= total) {
                throw new IllegalArgumentException("no record in the measured window: " + seconds + " s at " + rate + " records/s");
            }
            return new Window(from, to, total);
        }
    }

    /** Per partition, indexed by offset, each acknowledged record's Kafka timestamp (0: none). */
    synchronized long[][] timestamps() {
        long[][] copy = new long[timestamps.length][];
        for (int p = 0; p < copy.length; p++) {
            copy[p] = timestamps[p] == null ? new long[0] : timestamps[p].clone();
        }
        return copy;
    }

    private synchronized void record(int partition, long offset, long timestampMs) {
        if (partition >= timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, partition + 1);
        }
        long[] p = timestamps[partition] == null ? new long[1 << 16] : timestamps[partition];
        if (offset >= p.length) {
            p = Arrays.copyOf(p, (int) Math.max(offset + 1, p.length * 2L));
        }
        p[(int) offset] = timestampMs;
        timestamps[partition] = p;
    }
}
