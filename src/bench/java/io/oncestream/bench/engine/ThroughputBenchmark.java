package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.fmt;
import static io.oncestream.bench.engine.Figures.log;
import static io.oncestream.bench.engine.Figures.median;

import java.util.ArrayList;
import java.util.List;

import io.oncestream.bench.engine.BenchSetup.Run;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

/**
 * The default mode: the engine against a raw java-driver loader that writes the same rows with
 * the same statement, grouping and concurrency, on a grouped and a wide table, round after
 * round; the engine with and without fsync; filter and map alone ({@link DecodingBenchmark});
 * and latency at a quarter and at half of the engine's best wide rate ({@link LatencyBenchmark}).
 */
final class ThroughputBenchmark {

    private final BenchSetup setup;
    private final int rounds;
    private final LatencyBenchmark latency;

    ThroughputBenchmark(BenchSetup setup, int rounds, LatencyBenchmark latency) {
        this.setup = setup;
        this.rounds = rounds;
        this.latency = latency;
    }

    void run(double latencySeconds) throws Exception {
        int records = setup.records;
        String topic = "bench-" + System.currentTimeMillis();
        List<String> values = setup.freshKeyspaceAndTopic(topic, 1.0).values();
        JobConfig.CassandraSink sinkDefaults = JobConfigs.parse(setup.config(topic, "x", 1000, false)).sink();
        log("settings: maxInFlight %d, maxBatchRows %d, maxBatchPartitions %d, maxRecordsPerBatch 50000,"
                + " rows grouped by customer (%d partitions)", sinkDefaults.maxInFlight(), sinkDefaults.maxBatchRows(),
                sinkDefaults.maxBatchPartitions(), 2000);

        double[] decoding = DecodingBenchmark.decodingRatio(values);
        double[] decodingRich = DecodingBenchmark.decodingRatio(DecodingBenchmark.richer(values));
        double[] filtering = DecodingBenchmark.filterRatio(values);

        // Warm-up: JIT, connections, prepared statements.
        setup.engineRun(topic, "warmup", true, Math.min(records, 50_000));
        rawRun(values.subList(0, Math.min(values.size(), 50_000)), "warmup_raw", sinkDefaults);

        // Per round, in this order: raw, engine, engine without fsync (grouped), then raw, engine (wide).
        List<Run[]> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            Run[] r = {
                rawRun(values, "raw_" + round, sinkDefaults),
                setup.engineRun(topic, "synced_" + round, true, records),
                setup.engineRun(topic, "unsynced_" + round, false, records),
                rawRun(values, "wide_raw_" + round, sinkDefaults),
                setup.engineRun(topic, "wide_synced_" + round, true, records)};
            results.add(r);
            log("round %d: grouped: raw %s | engine %s | engine, no fsync %s", round, r[0], r[1], r[2]);
            log("round %d: wide: raw %s | engine %s", round, r[3], r[4]);
        }
        double[] grouped = ratios(results, r -> r[1].rowsPerSecond() / r[0].rowsPerSecond());
        double[] fsync = ratios(results, r -> r[1].rowsPerSecond() / r[2].rowsPerSecond());
        double[] wide = ratios(results, r -> r[4].rowsPerSecond() / r[3].rowsPerSecond());
        double[] wideCpu = ratios(results, r -> r[4].cpuPerMillion() / r[3].cpuPerMillion());
        double[] wideWhole = ratios(results, r -> r[4].wholeRowsPerSecond() / r[3].rowsPerSecond());
        double maxRate = results.stream().mapToDouble(r -> r[4].rowsPerSecond()).max().orElse(0);

        double[] half = latency.latencyRun(topic + "-latency", maxRate / 2, latencySeconds);
        double[] quarter = latency.latencyRun(topic + "-latency-quarter", maxRate / 4, latencySeconds);

        System.out.println();
        System.out.println("RESULTS (" + records + " records, " + rounds + " rounds, same Kafka and Cassandra; rows/s from the"
                + " first record to the last acknowledgement, for the engine and the raw loader alike)");
        System.out.printf("  grouped: engine / raw rows/s           : %s (median %.2f; 2,000 Cassandra partitions)%n", fmt(grouped), median(grouped));
        System.out.printf("  wide: engine / raw rows/s              : %s (median %.2f; one row per Cassandra partition)%n", fmt(wide), median(wide));
        System.out.printf("  wide: engine / raw CPU per record      : %s (median %.2f; the benchmark JVM's CPU time over each run,"
                + " the engine's from its start to its return)%n", fmt(wideCpu), median(wideCpu));
        System.out.printf("  wide: engine start-to-return / raw     : %s (median %.2f; with the engine's fixed costs: planning,"
                + " the first fetch, the last commit and the check that nothing is left)%n", fmt(wideWhole), median(wideWhole));
        DecodingBenchmark.print(decoding, decodingRich, filtering);
        System.out.printf("  engine WAL fsync on / off (grouped)    : %s (median %.2f)%n", fmt(fsync), median(fsync));
        System.out.printf("  wide latency at %,.0f rec/s (25%% max) : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                maxRate / 4, quarter[0], quarter[1], quarter[2], (long) quarter[3]);
        System.out.printf("  wide latency at %,.0f rec/s (50%% max) : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                maxRate / 2, half[0], half[1], half[2], (long) half[3]);
        System.out.println("  (latency: Kafka record timestamp to Cassandra's acknowledgement of the last write of its batch)");
    }

    private static double[] ratios(List<Run[]> results, java.util.function.ToDoubleFunction<Run[]> ratio) {
        return results.stream().mapToDouble(ratio).sorted().toArray();
    }

    // ---- the raw driver loader: same rows, same statement, same grouping and concurrency (RawWrites) ----

    private Run rawRun(List<String> values, String table, JobConfig.CassandraSink sink) throws Exception {
        setup.createTable(table);
        RawWrites writes = new RawWrites(setup.session, setup.keyspace, table, sink);
        // Records are parsed into memory before the clock starts (the loader reads no Kafka and
        // parses no JSON); binding, grouping and writing them is timed, as the engine's are.
        List<Object[]> orders = new ArrayList<>(values.size());
        for (String v : values) {
            String[] f = BenchOrders.parse(v);
            orders.add(new Object[] {f[0], f[1], Double.parseDouble(f[2]), Long.parseLong(f[3])});
        }
        long cpu = BenchSetup.cpuNanos();
        long start = System.nanoTime();
        long[] ts = {1};
        long lastAck = writes.write(orders, () -> ts[0]++);
        double cpuSeconds = (BenchSetup.cpuNanos() - cpu) / 1e9;
        double rate = values.size() / ((lastAck - start) / 1e9);
        return new Run(rate, cpuSeconds / values.size() * 1e6, rate);
    }
}
