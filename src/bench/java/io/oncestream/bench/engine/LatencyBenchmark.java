package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

/**
 * End-to-end latency on the wide table, from a record's Kafka timestamp to Cassandra's
 * acknowledgement of its batch's last write, with a producer in this JVM at a fixed rate and the
 * engine running continuously. Prints where the time goes, the benchmark JVM's and the
 * Cassandra node's GC pauses, and the CPUs that the services and this JVM used. Alone at one
 * rate ({@code --latency-at}), or at two rates in the throughput mode.
 */
final class LatencyBenchmark {

    /**
     * Seconds of producing at the rate before records are measured: the first seconds of a run
     * measure its start (a new table's first writes and prepared statement, the producer's
     * first sends), not the sustained rate the targets are about.
     */
    static final int LATENCY_WARMUP_SECONDS = 5;

    private final BenchSetup setup;
    /** The processes of the services, by name ({@code --service-pids cassandra=1,kafka=2}): their CPU in latency runs. */
    private final Map<String, Long> servicePids;
    /** Where the Cassandra node logs its GC pauses ({@code --cassandra-gc-log}), or null. */
    private final Path cassandraGcLog;
    /** The latency runs' {@code trigger.intervalMs} ({@code --latency-interval-ms}; 0: batches back to back). */
    private final long latencyIntervalMs;
    /** {@code --latency-consumer name=value,...}: Kafka consumer properties of the latency runs' job. */
    private final String latencyConsumer;
    /** {@code --latency-warmup-seconds}: seconds of producing before records are measured ({@link #LATENCY_WARMUP_SECONDS}). */
    private final int latencyWarmupSeconds;

    LatencyBenchmark(BenchSetup setup, Map<String, Long> servicePids, Path cassandraGcLog, long latencyIntervalMs,
            String latencyConsumer, int latencyWarmupSeconds) {
        this.setup = setup;
        this.servicePids = servicePids;
        this.cassandraGcLog = cassandraGcLog;
        this.latencyIntervalMs = latencyIntervalMs;
        this.latencyConsumer = latencyConsumer;
        this.latencyWarmupSeconds = latencyWarmupSeconds;
    }

    /**
     * Latency alone, at a given rate (records/s) on the wide table, after a warm-up run of the
     * engine over the benchmark's records; prints where the time goes (before a record's batch
     * starts writing / writing it) and the benchmark JVM's GC pauses during the run.
     */
    void alone(double rate, double seconds) throws Exception {
        String topic = "bench-latency-" + System.currentTimeMillis();
        setup.freshKeyspaceAndTopic(topic, 1.0);
        setup.engineRun(topic, "warmup", true, setup.records);
        double[] l = latencyRun(topic + "-latency", rate, seconds);
        System.out.println();
        System.out.printf("RESULTS (latency alone at %,.0f rec/s for %.0f s, wide table)%n", rate, seconds);
        System.out.printf("  wide latency at %,.0f rec/s : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                rate, l[0], l[1], l[2], (long) l[3]);
    }

    /** One latency run at {@code rate} on a new topic: {p50, p99, max, records measured}. */
    double[] latencyRun(String topic, double rate, double seconds) throws Exception {
        setup.createTopic(topic, 3);
        String table = topic.endsWith("-quarter") ? "wide_latency_quarter" : "wide_latency";
        setup.createTable(table);
        JobConfig config = JobConfigs.parse(setup.config(topic, table, 50_000, false)
                .replace("\"intervalMs\": 1000", "\"intervalMs\": " + latencyIntervalMs)
                .replace("\"maxRecordsPerBatch\"", "\"properties\": " + consumerProperties(latencyConsumer) + ", \"maxRecordsPerBatch\""));
        LatencySink.Recorder recorder = new LatencySink.Recorder();
        AtomicBoolean stop = new AtomicBoolean();
        try (BenchSetup.Assembly engine = setup.new Assembly(config, setup.work.resolve(table), true,
                sink -> new LatencySink(sink, recorder), stop)) {
            Thread runner = new Thread(engine.engine::run, "bench-engine");
            runner.start();
            // Not a synchronization: the engine's fixed head start before producing, part of how latency has been measured.
            Thread.sleep(2000);
            log("latency: producing at %,.0f records/s for %d + %.0f s, measuring records produced after the first %d s;"
                    + " trigger.intervalMs %d, consumer properties %s", rate, latencyWarmupSeconds, seconds, latencyWarmupSeconds,
                    latencyIntervalMs, consumerProperties(latencyConsumer));
            long measureFrom = System.currentTimeMillis() + latencyWarmupSeconds * 1000L;
            recorder.measureFrom(measureFrom);
            GcPauses gc = new GcPauses(measureFrom);
            Map<String, Long> pids = new LinkedHashMap<>(servicePids);
            pids.put("the benchmark JVM (engine and producer)", ProcessHandle.current().pid());
            ProcessCpu cpu = new ProcessCpu(pids);
            long produced = produceAtRate(topic, rate, latencyWarmupSeconds + seconds, measureFrom, cpu);
            String cpuUsed = ProcessCpu.available() ? cpu.summary() + "; the benchmark JVM's by thread: "
                    + cpu.threads(LatencyBenchmark::threadKind) : "no /proc/stat";
            long deadline = System.currentTimeMillis() + 60_000;
            while (engine.progress.snapshot().totals().written() < produced && System.currentTimeMillis() < deadline) {
                Thread.sleep(50); // the poll of a bounded wait for the last rows; the summary counts what was written
            }
            stop.set(true);
            runner.join(30_000);
            log("latency at %,.0f rec/s: %s", rate, recorder.breakdown());
            log("latency at %,.0f rec/s: the benchmark JVM's collections (engine and producer): %s", rate, gc.summary());
            log("latency at %,.0f rec/s: Cassandra's GC pauses: %s", rate,
                    GcPauses.loggedPauses(cassandraGcLog, measureFrom, System.currentTimeMillis()));
            log("latency at %,.0f rec/s: CPUs used while records were produced for measuring: %s", rate, cpuUsed);
            gc.close();
        }
        return recorder.summary();
    }

    /** {@code a=1,b=2} as a JSON object of strings. */
    static String consumerProperties(String list) {
        StringBuilder json = new StringBuilder("{");
        for (String entry : list.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            String[] kv = entry.split("=", 2);
            if (kv.length != 2 || kv[0].isBlank()) {
                throw new IllegalArgumentException("--latency-consumer: '" + entry + "' is not name=value");
            }
            json.append(json.length() > 1 ? ", " : "").append('"').append(kv[0].trim()).append("\": \"").append(kv[1].trim()).append('"');
        }
        return json.append('}').toString();
    }

    /**
     * The kinds of the benchmark JVM's threads in a latency run, from their names as Linux keeps
     * them: the engine's and the producer's threads, and otherwise {@link ThreadCpu#kind}'s.
     */
    static String threadKind(String name) {
        if (name.equals("bench-engine")) {
            return "engine (Kafka consumer, decoding, mapping, checkpoint)";
        }
        if (name.startsWith("kafka-producer")) {
            return "producer's I/O";
        }
        if (name.equals("main") || name.equals("java")) {
            return "producer (main thread)";
        }
        return ThreadCpu.kind(name);
    }

    /**
     * Produces at {@code rate} for {@code seconds}. {@code cpu}'s window opens with the first
     * record due at or after {@code measureFrom} and closes after the last, while the producer's
     * threads still run.
     */
    private long produceAtRate(String topic, double rate, double seconds, long measureFrom, ProcessCpu cpu) {
        Random random = new Random(7);
        long total = (long) (rate * seconds);
        long start = System.nanoTime();
        boolean windowOpen = false;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(setup.producerProps(1))) {
            for (long i = 0; i < total; i++) {
                // Paced by sleeping, not spinning: a spinning producer would take a whole core of two
                // from the engine, Kafka and Cassandra and inflate the latency it measures.
                long due = start + (long) (i * 1e9 / rate);
                long ahead = due - System.nanoTime();
                if (ahead > 200_000) {
                    java.util.concurrent.locks.LockSupport.parkNanos(ahead);
                }
                if (!windowOpen && System.currentTimeMillis() >= measureFrom) {
                    cpu.start();
                    windowOpen = true;
                }
                String v = BenchOrders.json(random, i);
                producer.send(new ProducerRecord<>(topic, BenchOrders.parse(v)[1], v));
            }
            if (!windowOpen) {
                cpu.start(); // nothing was due after measureFrom: an empty window, not a missing one
            }
            cpu.stop();
            producer.flush();
        }
        return total;
    }
}
