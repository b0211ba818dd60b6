package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;

import io.oncestream.bench.engine.LatencyContenders.Contender;
import io.oncestream.bench.engine.LatencyContenders.Running;

/**
 * Latency side by side ({@code --latency-side-by-side ROUNDS}, issue #31): the engine, the
 * simplest correct at-least-once loop over the same job (the floor, {@link AtLeastOnceFloor}),
 * and Spark Structured Streaming, at a quarter and at half of the engine's maximum wide rate
 * measured in the same run, round after round with the contenders' order rotated.
 *
 * <p>Every contender runs as a whole process of its own ({@link LatencyContenders}): the engine
 * as the packaged worker, as a pod runs it, because that is what users run and what the targets
 * are about, and the floor on the same JDK with the same JVM options and heap, so that the ratio
 * of the two measures the engine's protocol (WAL, commit log, deterministic timestamps), not a
 * difference of JVM, JIT state or heap. In one JVM with the producer, the contenders' JIT,
 * GC and heap would be shared and each one's CPU could only be told by thread.
 *
 * <p>In each run a producer in this JVM ({@link TimedProducer}) sends to a new topic at the
 * rate, first for a warm-up ({@code --latency-warmup-seconds}, 60 by default), then for the
 * measured window ({@code --latency-seconds}, 20 by default). Latency, the same for all
 * ({@link RecordLatencies}): the time Cassandra acknowledged the write of the batch that held a
 * record minus the record's Kafka timestamp, over the records produced in the window; p50, p99,
 * max. CPU per record: the contender's process's CPU time (user + system, all its threads, from
 * {@code /proc/<pid>/stat}) over the window, divided by the records produced in it.
 */
final class LatencyComparison {

    /** Seconds of warm-up before records are measured, unless {@code --latency-warmup-seconds} says otherwise. */
    static final int WARMUP_SECONDS = 60;

    private final BenchSetup setup;
    private final LatencyContenders contenders;
    private final Map<String, Long> servicePids;
    private final Path cassandraGcLog;
    private final int warmupSeconds;
    private final double seconds;
    /** The topics of the measured runs, deleted at the end (each holds a run's records: up to a few hundred MB). */
    private final List<String> topics = new ArrayList<>();

    LatencyComparison(BenchSetup setup, LatencyContenders contenders, Map<String, Long> servicePids, Path cassandraGcLog,
            int warmupSeconds, double seconds) {
        this.setup = setup;
        this.contenders = contenders;
        this.servicePids = servicePids;
        this.cassandraGcLog = cassandraGcLog;
        this.warmupSeconds = warmupSeconds;
        this.seconds = seconds;
    }

    /** One contender's run: its latencies and its CPU per record produced in the window (CPU-µs; NaN without /proc). */
    record Result(RecordLatencies.Summary latency, double cpuMicrosPerRecord) {
        @Override
        public String toString() {
            return latency + String.format(", %.1f CPU-µs per record", cpuMicrosPerRecord);
        }
    }

    void run(int rounds) throws Exception {
        List<Contender> all = contenders.all();
        if (all.stream().noneMatch(c -> c.name().equals("Spark"))) {
            log("Spark is not run (--no-spark, or no --spark-classpath, which benchmark.sh sets): its ratio is not told");
        }
        if (rounds < 3 || warmupSeconds < 60) {
            log("%d rounds, %d s of warm-up: a smoke run; the issue's method asks for at least 3 rounds and 60 s", rounds,
                    warmupSeconds);
        }
        double maxRate = maxWideRate();
        double[] rates = LatencyRounds.rates(maxRate);
        // results.get(rate).get(round): each contender's result by name
        List<List<Map<String, Result>>> results = new ArrayList<>();
        String stamp = Long.toString(System.currentTimeMillis());
        try {
            measureAll(rates, rounds, all, stamp, results);
        } finally {
            // At the end, not between runs: the broker deletes a topic's files a minute later, which would fall in a run.
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", setup.bootstrap))) {
                admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
            }
        }
        print(maxRate, rates, rounds, all, results);
    }

    /** Every rate's rounds, each contender in each round, into {@code results}. */
    private void measureAll(double[] rates, int rounds, List<Contender> all, String stamp, List<List<Map<String, Result>>> results)
            throws Exception {
        for (int r = 0; r < rates.length; r++) {
            List<Map<String, Result>> byRound = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                Map<String, Result> inRound = new LinkedHashMap<>();
                for (Contender c : LatencyRounds.order(all, round)) {
                    String run = "r" + r + "_" + (round + 1) + "_" + c.name().toLowerCase();
                    Result result = measure(c, rates[r], stamp, run);
                    log("rate %s, round %d, %s: %s", share(r), round + 1, c.name(), result);
                    inRound.put(c.name(), result);
                }
                byRound.add(inRound);
            }
            results.add(byRound);
        }
    }

    /** The engine's best wide rate over the topic's records (this JVM's engine, as the throughput mode measures it). */
    private double maxWideRate() throws Exception {
        String topic = "bench-side-by-side-" + System.currentTimeMillis();
        setup.freshKeyspaceAndTopic(topic, 1.0);
        log("the engine's maximum wide rate: a warm-up run, then the best of 2 runs over %,d records", setup.records);
        setup.engineRun(topic, "warmup", true, Math.min(setup.records, 50_000));
        double best = 0;
        for (int i = 1; i <= 2; i++) {
            BenchSetup.Run run = setup.engineRun(topic, "wide_max_" + i, true, setup.records);
            log("  run %d: %s", i, run);
            best = Math.max(best, run.rowsPerSecond());
        }
        return best;
    }

    /** One run of {@code contender} at {@code rate} on a new topic and table. */
    private Result measure(Contender contender, double rate, String stamp, String run) throws Exception {
        String topic = "bench-sbs-" + stamp + "-" + run.replace('_', '-');
        String table = "wide_sbs_" + run;
        setup.createTopic(topic, 3);
        topics.add(topic);
        setup.createTable(table);
        Path dir = Files.createDirectories(setup.work.resolve(table));
        log("%s: %s at %,.0f records/s, %d s of warm-up, then %.0f s measured (its files: %s)", run, contender.name(), rate,
                warmupSeconds, seconds, dir);
        try (Running running = contender.start(topic, table, dir)) {
            Map<String, Long> pids = new LinkedHashMap<>();
            pids.put(contender.name(), running.pid());
            pids.putAll(servicePids);
            pids.put("the benchmark JVM (producer)", ProcessHandle.current().pid());
            ProcessCpu cpu = new ProcessCpu(pids);
            TimedProducer producer = new TimedProducer(setup, topic);
            TimedProducer.Window window = producer.produce(rate, warmupSeconds, seconds, cpu::start, cpu::stop);
            running.awaitWritten(window.produced());
            running.stop();
            RecordLatencies.Summary latency = RecordLatencies.of(producer.timestamps(), running.batches(), window.fromMs(),
                    window.toMs());
            if (ProcessCpu.available()) {
                log("%s: CPUs used in the window: %s", run, cpu.summary());
            }
            log("%s: Cassandra's GC pauses in the window: %s", run, GcPauses.loggedPauses(cassandraGcLog, window.fromMs(),
                    window.toMs()));
            String phases = running.phases(window.fromMs(), window.toMs());
            if (phases != null) {
                log("%s: its batches in the window: %s", run, phases);
            }
            return new Result(latency, cpu.seconds(contender.name()) / latency.produced() * 1e6);
        }
    }

    private void print(double maxRate, double[] rates, int rounds, List<Contender> all, List<List<Map<String, Result>>> results) {
        System.out.println();
        System.out.printf("RESULTS (latency side by side: %s; %d rounds per rate, the order rotated each round; %d s of warm-up,"
                + " %.0f s measured; the engine's maximum wide rate %,.0f records/s)%n", all, rounds, warmupSeconds, seconds, maxRate);
        System.out.println("  (latency: Cassandra's acknowledgement of the batch that held a record - the record's Kafka timestamp;"
                + " CPU: the contender's process over the window, per record produced in it)");
        for (int r = 0; r < rates.length; r++) {
            System.out.printf("  %s (%,.0f records/s):%n", share(r), rates[r]);
            for (int round = 0; round < rounds; round++) {
                Map<String, Result> inRound = results.get(r).get(round);
                for (Contender c : LatencyRounds.order(all, round)) {
                    System.out.printf("    round %d, %-6s: %s%n", round + 1, c.name(), inRound.get(c.name()));
                }
            }
        }
        System.out.println("  ratios per round:");
        for (int r = 0; r < rates.length; r++) {
            List<Map<String, Result>> byRound = results.get(r);
            System.out.println(LatencyRounds.line(share(r), LatencyRounds.ENGINE_FLOOR_P99,
                    perRound(byRound, "floor", false)));
            if (all.stream().anyMatch(c -> c.name().equals("Spark"))) {
                System.out.println(LatencyRounds.line(share(r), LatencyRounds.ENGINE_SPARK_P99,
                        perRound(byRound, "Spark", false)));
            }
            if (all.stream().anyMatch(c -> c.name().equals(LatencyContenders.BEFORE))) {
                System.out.println(LatencyRounds.line(share(r), LatencyRounds.BEFORE_FLOOR_P99,
                        perRound(byRound, LatencyContenders.BEFORE, "floor", res -> res.latency().p99())));
                System.out.println(LatencyRounds.line(share(r), LatencyRounds.ENGINE_BEFORE_P99,
                        perRound(byRound, "engine", LatencyContenders.BEFORE, res -> res.latency().p99())));
                System.out.println(LatencyRounds.line(share(r), LatencyRounds.ENGINE_BEFORE_P50,
                        perRound(byRound, "engine", LatencyContenders.BEFORE, res -> res.latency().p50())));
            }
            System.out.println(LatencyRounds.line(share(r), LatencyRounds.ENGINE_FLOOR_CPU,
                    perRound(byRound, "floor", true)));
        }
    }

    /** Per round, the engine's p99 (or CPU per record) over {@code other}'s. */
    private static double[] perRound(List<Map<String, Result>> byRound, String other, boolean cpu) {
        return perRound(byRound, "engine", other, cpu ? Result::cpuMicrosPerRecord : r -> r.latency().p99());
    }

    /** Per round, {@code one}'s {@code figure} over {@code other}'s. */
    private static double[] perRound(List<Map<String, Result>> byRound, String one, String other,
            java.util.function.ToDoubleFunction<Result> figure) {
        return byRound.stream().mapToDouble(inRound -> LatencyRounds.ratio(figure.applyAsDouble(inRound.get(one)),
                figure.applyAsDouble(inRound.get(other)))).toArray();
    }

    private static String share(int rateIndex) {
        return String.format("%.0f %% of max", LatencyRounds.RATE_SHARES[rateIndex] * 100);
    }
}
