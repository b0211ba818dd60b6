package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Side-by-side benchmark of the worker engine on one Kafka broker and one Cassandra node,
 * printing ratios measured in one run. This class reads the options and runs one mode:
 * <ul>
 * <li>{@link ThroughputBenchmark} (the default): engine rows/s (Kafka to Cassandra, WAL and
 *     commits fsync'd) / a raw java-driver loader writing the same rows with the same
 *     concurrency and batching, on a "grouped" (2,000 Cassandra partitions) and a "wide" (one
 *     row per partition) table; CPU per record (wide); WAL fsync on / off; and latency at a
 *     quarter and at half of the engine's wide rate;</li>
 * <li>{@link LatencyBenchmark} ({@code --latency-at RATE}): latency alone at one rate;</li>
 * <li>{@link LatencyComparison} ({@code --latency-side-by-side ROUNDS}): latency of the packaged
 *     worker, of an at-least-once loop over the same job and of Spark, side by side, at a quarter
 *     and at half of the engine's maximum;</li>
 * <li>{@link DecodingBenchmark} ({@code --decoding-only N}): filter and map on one thread, no
 *     services;</li>
 * <li>{@link DurableWriteBenchmark} ({@code --durable-writes N}): one durable checkpoint entry as
 *     the engine writes it, against appending to a log, on the disk alone;</li>
 * <li>{@link WorkerMemoryBenchmark} ({@code --worker-memory LOADS}): the packaged worker's memory
 *     under a memory limit at each load, and the smallest limit each load runs in;</li>
 * <li>{@link WorkerProcessBenchmark} ({@code --worker-process N}): the packaged worker as a
 *     whole process, with earlier builds, JVM options, AOT caches and Spark
 *     ({@link SparkComparison}) side by side.</li>
 * </ul>
 * What the modes against the services share (session, tables, topics, records, the engine in
 * this JVM) is {@link BenchSetup}. Run by {@code deploy/local/benchmark.sh}, whose header lists
 * every option; never part of the test suite.
 */
public final class EngineBenchmark {

    private EngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        // The worker's log setup (INFO): without it, library debug logging would be formatted on hot paths.
        io.oncestream.worker.WorkerLogging.install();
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        LatencyBenchmark.consumerProperties(a.getOrDefault("latency-consumer", "")); // a malformed list is refused before anything runs
        if (a.containsKey("decoding-only")) { // the CPU-only comparison, without Kafka or Cassandra
            DecodingBenchmark.alone(Integer.parseInt(a.get("decoding-only")));
            System.exit(0);
        }
        if (a.containsKey("durable-writes")) { // the disk alone: what one checkpoint entry costs, per way of writing it
            DurableWriteBenchmark.alone(Integer.parseInt(a.get("durable-writes")));
            System.exit(0);
        }
        if (a.containsKey("worker-memory")) { // its own keyspace and topics, not the other modes' shared ones
            new WorkerMemoryBenchmark(a.getOrDefault("kafka", "127.0.0.1:19092"), a.getOrDefault("cassandra", "127.0.0.1:19042"),
                    a.getOrDefault("datacenter", "datacenter1"), a.containsKey("worker-jdk") ? Path.of(a.get("worker-jdk")) : null,
                    List.of(a.getOrDefault("worker-java-options", "").split("\\|", -1)),
                    Integer.parseInt(a.getOrDefault("seconds", "60")), Integer.parseInt(a.getOrDefault("warmup-seconds", "15")),
                    Integer.parseInt(a.getOrDefault("max-records", "1500000")), a.getOrDefault("nmt", "no").equals("yes"),
                    Integer.parseInt(a.getOrDefault("max-records-per-batch", String.valueOf(io.oncestream.contract.JobDefaults.MAX_RECORDS_PER_BATCH))),
                    Integer.parseInt(a.getOrDefault("record-bytes", "0")))
                    .run(List.of(a.get("worker-memory").split(",")),
                            java.util.Arrays.stream(a.getOrDefault("limits", "512,384,320,256,192,160,128").split(","))
                                    .map(Integer::valueOf).toList());
            System.exit(0);
        }
        int records = Integer.parseInt(a.getOrDefault("records", "200000"));
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "2"));
        BenchSetup setup = new BenchSetup(a.getOrDefault("kafka", "127.0.0.1:19092"),
                a.getOrDefault("cassandra", "127.0.0.1:19042"), a.getOrDefault("datacenter", "datacenter1"),
                records, Files.createTempDirectory("oncestream-bench"));
        Path cassandraGcLog = a.containsKey("cassandra-gc-log") ? Path.of(a.get("cassandra-gc-log")) : null;
        long latencyIntervalMs = Long.parseLong(a.getOrDefault("latency-interval-ms", "0"));
        String latencyConsumer = a.getOrDefault("latency-consumer", "");
        int latencyWarmupSeconds = Integer.parseInt(a.getOrDefault("latency-warmup-seconds",
                String.valueOf(LatencyBenchmark.LATENCY_WARMUP_SECONDS)));
        Map<String, Long> servicePids = new LinkedHashMap<>();
        if (a.containsKey("service-pids")) {
            for (String entry : a.get("service-pids").split(",")) {
                String[] nameAndPid = entry.split("=", 2);
                if (nameAndPid.length == 2 && nameAndPid[1].matches("\\d+")) {
                    servicePids.put(nameAndPid[0], Long.parseLong(nameAndPid[1]));
                } else {
                    log("--service-pids: no process id in '%s' (its pid file is missing?): its CPU is not shown", entry);
                }
            }
        }
        LatencyBenchmark latency = new LatencyBenchmark(setup, servicePids, cassandraGcLog, latencyIntervalMs, latencyConsumer,
                latencyWarmupSeconds);
        try (setup) {
            if (a.containsKey("worker-process")) {
                workerProcess(setup, a).run(Integer.parseInt(a.get("worker-process")));
            } else if (a.containsKey("latency-side-by-side")) {
                latencyComparison(setup, a, servicePids, cassandraGcLog, latencyIntervalMs, latencyConsumer)
                        .run(Integer.parseInt(a.get("latency-side-by-side")));
            } else if (a.containsKey("latency-at")) {
                latency.alone(Double.parseDouble(a.get("latency-at")), Double.parseDouble(a.getOrDefault("latency-seconds", "20")));
            } else {
                new ThroughputBenchmark(setup, rounds, latency).run(Double.parseDouble(a.getOrDefault("latency-seconds", "20")));
            }
        }
        System.exit(0);
    }

    /** The worker-process mode with its options: {@code --passing}, {@code --worker-java-options}, {@code --baseline}, ... */
    private static WorkerProcessBenchmark workerProcess(BenchSetup setup, Map<String, String> a) {
        double passing = Double.parseDouble(a.getOrDefault("passing", "1"));
        List<String> workerJavaOptions = List.of(a.getOrDefault("worker-java-options", "").split("\\|", -1));
        Path baseline = a.containsKey("baseline") ? Path.of(a.get("baseline")) : null;
        Path aotJava = a.containsKey("aot-java") ? Path.of(a.get("aot-java")) : null;
        Path workerJdk = a.containsKey("worker-jdk") ? Path.of(a.get("worker-jdk")) : null;
        return new WorkerProcessBenchmark(setup, passing, workerJavaOptions, baseline, aotJava, workerJdk, spark(setup, a));
    }

    /**
     * The latency side by side with its options: {@code --latency-warmup-seconds} (60 by default in this mode),
     * {@code --latency-seconds}, {@code --spark-trigger-ms}, {@code --baseline DIR} (an earlier build's engine too),
     * and the worker's and Spark's.
     */
    private static LatencyComparison latencyComparison(BenchSetup setup, Map<String, String> a, Map<String, Long> servicePids,
            Path cassandraGcLog, long intervalMs, String consumer) {
        Path workerJdk = a.containsKey("worker-jdk") ? Path.of(a.get("worker-jdk")) : null;
        long sparkTriggerMs = Long.parseLong(a.getOrDefault("spark-trigger-ms", "0"));
        Path baseline = a.containsKey("baseline") ? Path.of(a.get("baseline")) : null;
        LatencyContenders contenders = new LatencyContenders(setup, workerJdk, intervalMs, consumer,
                spark(setup, a), sparkTriggerMs, baseline);
        return new LatencyComparison(setup, contenders, servicePids, cassandraGcLog,
                Integer.parseInt(a.getOrDefault("latency-warmup-seconds", String.valueOf(LatencyComparison.WARMUP_SECONDS))),
                Double.parseDouble(a.getOrDefault("latency-seconds", "20")));
    }

    /** The Spark job with {@code --spark-batch} and {@code --spark-grouping}, or null without {@code --spark-classpath}. */
    private static SparkComparison spark(BenchSetup setup, Map<String, String> a) {
        String sparkClasspath = a.get("spark-classpath");
        long sparkBatch = Long.parseLong(a.getOrDefault("spark-batch", "50000"));
        String sparkGrouping = a.getOrDefault("spark-grouping", "partition");
        if (!List.of("partition", "replica_set").contains(sparkGrouping)) {
            throw new IllegalArgumentException("--spark-grouping is partition or replica_set, was " + sparkGrouping);
        }
        return sparkClasspath == null ? null : new SparkComparison(setup, sparkClasspath, sparkBatch, sparkGrouping);
    }
}
