package io.oncestream.bench.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.cassandra.UnloggedBatches;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;
import io.oncestream.engine.transform.TransformResult;
import io.oncestream.worker.EngineAssembly;

/**
 * Side-by-side benchmark on one Kafka broker and one Cassandra node, printing ratios:
 * <ol>
 * <li>engine rows/s (Kafka to Cassandra, WAL and commits fsync'd) / a raw java-driver loader
 *     writing the same rows with the same concurrency and batching, on two table shapes:
 *     "grouped" (2,000 Cassandra partitions) and "wide" (one row per partition). Both are
 *     timed the same way: from the first record (the loader's first bound row, the engine's
 *     first mapped record) to the last acknowledgement; the loader's records are parsed into
 *     memory before, so its span is binding, grouping and writing;</li>
 * <li>the benchmark JVM's CPU time per record over each run (wide), the engine's from
 *     {@code run()} to its return, the loader's over its timed span;</li>
 * <li>engine rows/s with WAL fsync / without;</li>
 * <li>end-to-end latency on the wide table, Kafka record timestamp to Cassandra's
 *     acknowledgement of its batch, with a producer at a quarter and at half of the engine's
 *     measured wide rate.</li>
 * </ol>
 * Run by {@code deploy/local/benchmark.sh}; never part of the test suite.
 */
public final class EngineBenchmark {

    private final String bootstrap;
    private final String contactPoint;
    private final String datacenter;
    private final int records;
    private final int rounds;
    private final Path work;
    private final CqlSession session;
    private final String keyspace = "oncestream_bench";
    /** The processes of the services, by name ({@code --service-pids cassandra=1,kafka=2}): their CPU in latency runs. */
    private final Map<String, Long> servicePids = new LinkedHashMap<>();
    /** Where the Cassandra node logs its GC pauses ({@code --cassandra-gc-log}), or null. */
    private Path cassandraGcLog;
    /** The latency runs' {@code trigger.intervalMs} ({@code --latency-interval-ms}; 0: batches back to back). */
    private long latencyIntervalMs;
    /** {@code --latency-consumer name=value,...}: Kafka consumer properties of the latency runs' job. */
    private String latencyConsumer = "";
    /** The fraction of produced records that pass the filter ({@code --passing}, worker-process mode; 1 elsewhere). */
    private double passing = 1.0;
    /**
     * Sets of JVM options for the packaged worker, each run with each set in turn
     * ({@code --worker-java-options "-XX:A|-XX:B"}, {@code |} between sets; worker-process mode).
     */
    private List<String> workerJavaOptions = List.of("");
    /**
     * Another build of the worker ({@code --baseline DIR}: a copy of an earlier {@code target/quarkus-app}),
     * run in each round with the first set of JVM options, or null: a code change measured side by side.
     */
    private Path baseline;
    /**
     * A JDK of version 25 or later ({@code --aot-java JAVA_HOME}), or null: the worker also runs on it, without
     * and with an AOT cache (JEP 483, 515) made by a training run, each with the first set of JVM options.
     */
    private Path aotJava;
    /** The JDK the worker runs on ({@code --worker-jdk JAVA_HOME}: the images' runtime, from benchmark.sh), or null: this benchmark's. */
    private Path workerJdk;
    /** How many of the records {@link #produce} made pass the filter. */
    private int passingRecords;
    /**
     * The class path of the Spark Structured Streaming comparison job ({@code --spark-classpath},
     * set by {@code benchmark.sh --spark}; worker-process mode), or null for no comparison.
     */
    private String sparkClasspath;
    /** Records per Spark micro-batch ({@code --spark-batch}; 0: everything in one). */
    private long sparkBatch = 50_000;
    /**
     * How the Spark Cassandra Connector groups rows into unlogged batches ({@code --spark-grouping}):
     * {@code partition} (its default: on the wide table every row alone) or {@code replica_set}
     * (partitions with the same replicas, as the worker does, at most the worker's
     * {@code maxBatchPartitions} rows per batch).
     */
    private String sparkGrouping = "partition";

    private EngineBenchmark(String bootstrap, String contactPoint, String datacenter, int records, int rounds, Path work) {
        this.bootstrap = bootstrap;
        this.contactPoint = contactPoint;
        this.datacenter = datacenter;
        this.records = records;
        this.rounds = rounds;
        this.work = work;
        this.session = CassandraSessions.open(JobConfigs.parse(config("t", "x", 1000, false)).sink(), null, null);
    }

    public static void main(String[] args) throws Exception {
        // The worker's log setup (INFO): without it, library debug logging would be formatted on hot paths.
        io.oncestream.worker.WorkerLogging.install();
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        consumerProperties(a.getOrDefault("latency-consumer", "")); // a malformed list is refused before anything runs
        if (a.containsKey("decoding-only")) { // the CPU-only comparison, without Kafka or Cassandra
            Random random = new Random(7);
            List<String> values = new ArrayList<>();
            for (int i = 0; i < Integer.parseInt(a.get("decoding-only")); i++) {
                values.add(Row.json(random, i));
            }
            printDecoding(decodingRatio(values), decodingRatio(richer(values)), filterRatio(values));
            System.exit(0);
        }
        EngineBenchmark b = new EngineBenchmark(a.getOrDefault("kafka", "127.0.0.1:19092"),
                a.getOrDefault("cassandra", "127.0.0.1:19042"), a.getOrDefault("datacenter", "datacenter1"),
                Integer.parseInt(a.getOrDefault("records", "200000")), Integer.parseInt(a.getOrDefault("rounds", "2")),
                Files.createTempDirectory("oncestream-bench"));
        b.cassandraGcLog = a.containsKey("cassandra-gc-log") ? Path.of(a.get("cassandra-gc-log")) : null;
        b.latencyIntervalMs = Long.parseLong(a.getOrDefault("latency-interval-ms", "0"));
        b.latencyConsumer = a.getOrDefault("latency-consumer", "");
        b.latencyWarmupSeconds = Integer.parseInt(a.getOrDefault("latency-warmup-seconds", String.valueOf(LATENCY_WARMUP_SECONDS)));
        if (a.containsKey("service-pids")) {
            for (String entry : a.get("service-pids").split(",")) {
                String[] nameAndPid = entry.split("=", 2);
                if (nameAndPid.length == 2 && nameAndPid[1].matches("\\d+")) {
                    b.servicePids.put(nameAndPid[0], Long.parseLong(nameAndPid[1]));
                } else {
                    log("--service-pids: no process id in '%s' (its pid file is missing?): its CPU is not shown", entry);
                }
            }
        }
        try {
            if (a.containsKey("worker-process")) {
                b.passing = Double.parseDouble(a.getOrDefault("passing", "1"));
                b.workerJavaOptions = List.of(a.getOrDefault("worker-java-options", "").split("\\|", -1));
                b.sparkClasspath = a.get("spark-classpath");
                b.baseline = a.containsKey("baseline") ? Path.of(a.get("baseline")) : null;
                b.aotJava = a.containsKey("aot-java") ? Path.of(a.get("aot-java")) : null;
                b.workerJdk = a.containsKey("worker-jdk") ? Path.of(a.get("worker-jdk")) : null;
                b.sparkBatch = Long.parseLong(a.getOrDefault("spark-batch", "50000"));
                b.sparkGrouping = a.getOrDefault("spark-grouping", "partition");
                if (!List.of("partition", "replica_set").contains(b.sparkGrouping)) {
                    throw new IllegalArgumentException("--spark-grouping is partition or replica_set, was " + b.sparkGrouping);
                }
                b.workerProcess(Integer.parseInt(a.get("worker-process")));
            } else if (a.containsKey("latency-at")) {
                b.latencyOnly(Double.parseDouble(a.get("latency-at")), Double.parseDouble(a.getOrDefault("latency-seconds", "20")));
            } else {
                b.run(Double.parseDouble(a.getOrDefault("latency-seconds", "20")));
            }
        } finally {
            b.session.close();
        }
        System.exit(0);
    }

    private void run(double latencySeconds) throws Exception {
        String topic = "bench-" + System.currentTimeMillis();
        List<String> values = freshKeyspaceAndTopic(topic);
        JobConfig.CassandraSink sinkDefaults = JobConfigs.parse(config(topic, "x", 1000, false)).sink();
        int inFlight = sinkDefaults.maxInFlight();
        int[] batching = {sinkDefaults.maxBatchRows(), sinkDefaults.maxBatchPartitions(), sinkDefaults.maxBatchBytes()};
        log("settings: maxInFlight %d, maxBatchRows %d, maxBatchPartitions %d, maxRecordsPerBatch 50000,"
                + " rows grouped by customer (%d partitions)", inFlight, batching[0], batching[1], 2000);

        double[] decoding = decodingRatio(values);
        double[] decodingRich = decodingRatio(richer(values));
        double[] filtering = filterRatio(values);

        // Warm-up: JIT, connections, prepared statements.
        engineRun(topic, "warmup", true, Math.min(records, 50_000));
        rawRun(values.subList(0, Math.min(values.size(), 50_000)), "warmup_raw", inFlight, batching);

        // Per round, in this order: raw, engine, engine without fsync (grouped), then raw, engine (wide).
        List<Run[]> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            Run[] r = {
                rawRun(values, "raw_" + round, inFlight, batching),
                engineRun(topic, "synced_" + round, true, records),
                engineRun(topic, "unsynced_" + round, false, records),
                rawRun(values, "wide_raw_" + round, inFlight, batching),
                engineRun(topic, "wide_synced_" + round, true, records)};
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

        double[] half = latencyRun(topic + "-latency", maxRate / 2, latencySeconds);
        double[] quarter = latencyRun(topic + "-latency-quarter", maxRate / 4, latencySeconds);

        System.out.println();
        System.out.println("RESULTS (" + records + " records, " + rounds + " rounds, same Kafka and Cassandra; rows/s from the"
                + " first record to the last acknowledgement, for the engine and the raw loader alike)");
        System.out.printf("  grouped: engine / raw rows/s           : %s (median %.2f; 2,000 Cassandra partitions)%n", fmt(grouped), median(grouped));
        System.out.printf("  wide: engine / raw rows/s              : %s (median %.2f; one row per Cassandra partition)%n", fmt(wide), median(wide));
        System.out.printf("  wide: engine / raw CPU per record      : %s (median %.2f; the benchmark JVM's CPU time over each run,"
                + " the engine's from its start to its return)%n", fmt(wideCpu), median(wideCpu));
        System.out.printf("  wide: engine start-to-return / raw     : %s (median %.2f; with the engine's fixed costs: planning,"
                + " the first fetch, the last commit and the check that nothing is left)%n", fmt(wideWhole), median(wideWhole));
        printDecoding(decoding, decodingRich, filtering);
        System.out.printf("  engine WAL fsync on / off (grouped)    : %s (median %.2f)%n", fmt(fsync), median(fsync));
        System.out.printf("  wide latency at %,.0f rec/s (25%% max) : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                maxRate / 4, quarter[0], quarter[1], quarter[2], (long) quarter[3]);
        System.out.printf("  wide latency at %,.0f rec/s (50%% max) : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                maxRate / 2, half[0], half[1], half[2], (long) half[3]);
        System.out.println("  (latency: Kafka record timestamp to Cassandra's acknowledgement of the last write of its batch)");
    }

    /**
     * The packaged worker as a worker pod runs it ({@code java -jar quarkus-run.jar worker}, the pod's
     * {@code JAVA_TOOL_OPTIONS}, a 512 MB heap), as a
     * whole process, {@code availableNow} over the benchmark's records into the wide table:
     * the fixed costs around the batches (process start to its first batch's start, its last
     * commit to the process's exit), rows/s from process start to exit, and the worker JVM's CPU
     * time (user + system) per million input records, medians of {@code runs}.
     */
    private void workerProcess(int runs) throws Exception {
        Path jar = Path.of("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: build the worker first (mvn package -DskipTests)");
        }
        // What runs side by side in each round: this build with each set of options, then the baseline build.
        Path workerJava = workerJdk == null ? null : workerJdk.resolve("bin/java");
        if (workerJava != null && !Files.isExecutable(workerJava)) {
            throw new IllegalStateException(workerJava + " is missing: --worker-jdk names a JDK home");
        }
        List<WorkerVariant> variants = new ArrayList<>();
        for (String options : workerJavaOptions) {
            variants.add(new WorkerVariant("JVM options [-Xmx512m " + options.trim() + "]", workerJava, jar, options.trim()));
        }
        if (baseline != null) {
            Path baselineJar = baseline.resolve("quarkus-run.jar");
            if (!Files.exists(baselineJar)) {
                throw new IllegalStateException(baselineJar + " is missing: --baseline names a copy of an earlier build's"
                        + " target/quarkus-app");
            }
            String options = workerJavaOptions.get(0).trim();
            variants.add(new WorkerVariant("baseline build " + baseline + ", JVM options [-Xmx512m " + options + "]",
                    workerJava, baselineJar, options));
        }
        String topic = "bench-process-" + System.currentTimeMillis();
        freshKeyspaceAndTopic(topic);
        // A Cassandra node just started, or a topic just written, made the first measured run the
        // slowest of every benchmark (12.5k rows/s against 17-21k): one run first, not measured.
        log("warm-up: the worker over the topic once, not measured, so that Kafka and Cassandra are warm for run 1");
        workerRun(variants.get(0), topic, "wide_process_warmup");
        if (aotJava != null) {
            Path java = aotJava.resolve("bin/java");
            if (!Files.isExecutable(java)) {
                throw new IllegalStateException(java + " is missing: --aot-java names a JDK home, of version 25 or later");
            }
            String options = workerJavaOptions.get(0).trim();
            String on = "JDK " + aotJava + ", JVM options [-Xmx512m " + options + "]";
            Path started = work.resolve("aot-start.aot");
            Path whole = work.resolve("aot-whole.aot");
            log("AOT cache training (not measured): the worker on %s starting and finding no records (startingOffsets latest)", aotJava);
            aotTraining(java, jar, topic, "wide_process_aot_start", true, started);
            log("AOT cache training (not measured): the worker on %s over the whole topic", aotJava);
            aotTraining(java, jar, topic, "wide_process_aot_whole", false, whole);
            variants.add(new WorkerVariant(on, java, jar, options));
            // AOTMode=on: a cache the JVM cannot use fails the run instead of running without it.
            variants.add(new WorkerVariant(on + ", AOT cache of a start that read no records", java, jar,
                    (options + " -XX:AOTMode=on -XX:AOTCache=" + started).trim()));
            variants.add(new WorkerVariant(on + ", AOT cache of a run over this same topic", java, jar,
                    (options + " -XX:AOTMode=on -XX:AOTCache=" + whole).trim()));
        }
        List<List<double[]>> results = new ArrayList<>(); // per variant: {start to first batch, last commit to exit, whole, rows/s, CPU-s/M}
        List<double[]> spark = new ArrayList<>(); // per run: {whole, rows/s, CPU-s/M}
        variants.forEach(v -> results.add(new ArrayList<>()));
        for (int run = 1; run <= runs; run++) {
            for (int set = 0; set < variants.size(); set++) { // side by side: each variant once per round
                WorkerVariant variant = variants.get(set);
                double[] r = workerRun(variant, topic, "wide_process_" + run + "_" + set);
                results.get(set).add(r);
                log("run %d, %s: process start to first batch %.0f ms, last commit to exit %.0f ms,"
                        + " whole process %.0f ms (%,.0f rows/s), %.1f CPU-s per million input records (%s)", run, variant.label(),
                        r[0], r[1], r[2], r[3], r[4], byKind(Arrays.copyOfRange(r, 5, r.length), "sampled every 100 ms"));
            }
            if (sparkClasspath != null) { // in the same round, on the same topic and Cassandra
                double[] s = sparkRun(topic, "wide_spark_" + run);
                spark.add(s);
                double[] w = results.get(0).get(run - 1);
                log("run %d, Spark Structured Streaming: whole process %.0f ms (%,.0f rows/s), %.1f CPU-s per million input records;"
                        + " worker %s / Spark: rows/s %.2f, CPU per record %.2f", run, s[0], s[1], s[2],
                        variants.get(0).label(), w[3] / s[1], w[4] / s[2]);
            }
        }
        System.out.println();
        System.out.printf("RESULTS (packaged worker, availableNow, %,d records of which %,d pass the filter, into the wide table,"
                + " median of %d runs after one not measured; on %s; JAVA_TOOL_OPTIONS as in an availableNow job's worker pod: %s;"
                + " JDK_JAVA_OPTIONS as in the image: %s)%n", records, passingRecords,
                runs, workerJdk == null ? System.getProperty("java.home") : workerJdk,
                io.oncestream.operator.model.WorkerStatefulSets.AVAILABLE_NOW_JVM_OPTIONS,
                java.util.Objects.requireNonNullElse(imageJdkJavaOptions(workerJava), "none (before Java 24)"));
        for (int set = 0; set < variants.size(); set++) {
            List<double[]> r = results.get(set);
            System.out.printf("  %s%n", variants.get(set).label());
            System.out.printf("    process start to its first batch   : %.0f ms%n", medianOf(r, 0));
            System.out.printf("    last commit to process exit        : %.0f ms%n", medianOf(r, 1));
            System.out.printf("    whole process                      : %.0f ms (%,.0f rows/s)%n", medianOf(r, 2), medianOf(r, 3));
            System.out.printf("    worker JVM CPU per million records : %.1f CPU-s (user + system, the whole process, per input record)%n",
                    medianOf(r, 4));
            if (ThreadCpu.available()) {
                double[] medians = new double[ThreadCpu.KINDS.size()];
                for (int k = 0; k < medians.length; k++) {
                    medians[k] = medianOf(r, 5 + k);
                }
                System.out.printf("      by thread, medians               : %s%n", byKind(medians, "each kind's median"));
            }
        }
        if (baseline != null) {
            List<double[]> now = results.get(0);
            List<double[]> before = results.get(variants.size() - 1);
            double[] rate = perRun(now, 3, before, 3);
            double[] cpu = perRun(now, 4, before, 4);
            double[] start = perRun(now, 0, before, 0);
            System.out.printf("  this build / baseline, per run       : rows/s %s (median %.2f), CPU per record %s (median %.2f),"
                    + " start to first batch %s (median %.2f)%n", fmt(rate), median(rate), fmt(cpu), median(cpu), fmt(start), median(start));
        }
        if (sparkClasspath != null) {
            System.out.printf("  Spark Structured Streaming %s, local[%d], %s records per micro-batch, -Xmx%s,"
                    + " rows batched by %s%n", sparkVersion, SPARK_THREADS, sparkBatch == 0 ? "all" : String.format("%,d", sparkBatch),
                    SPARK_HEAP, sparkGrouping.equals("partition") ? "partition (the connector's default)"
                            : "replica set, up to " + sparkBatchRows() + " rows");
            System.out.printf("    whole process                      : %.0f ms (%,.0f rows/s)%n", medianOf(spark, 0), medianOf(spark, 1));
            System.out.printf("    Spark JVM CPU per million records  : %.1f CPU-s%n", medianOf(spark, 2));
            for (int set = 0; set < variants.size(); set++) {
                double[] rate = perRun(results.get(set), 3, spark, 1);
                double[] cpu = perRun(results.get(set), 4, spark, 2);
                System.out.printf("  worker, %s / Spark, per run : rows/s %s (median %.2f), CPU per record %s (median %.2f)%n",
                        variants.get(set).label(), fmt(rate), median(rate), fmt(cpu), median(cpu));
            }
        }
    }

    /** Per run, {@code a}'s figure at {@code ai} over {@code b}'s at {@code bi} (runs side by side), sorted. */
    private static double[] perRun(List<double[]> a, int ai, List<double[]> b, int bi) {
        double[] ratios = new double[a.size()];
        for (int run = 0; run < ratios.length; run++) {
            ratios[run] = a.get(run)[ai] / b.get(run)[bi];
        }
        Arrays.sort(ratios);
        return ratios;
    }

    /** A build of the worker and the JVM options it runs with, in the worker-process benchmark. */
    private record WorkerVariant(String label, Path java, Path jar, String options) {
    }

    /** The Spark version the comparison job ran with, as it printed it. */
    private String sparkVersion = "?";
    /** Spark's task threads (local[N]) and heap; writes in flight per task, so that tasks × writes = the worker's 256. */
    private static final int SPARK_THREADS = 2;
    private static final String SPARK_HEAP = "2g";
    private static final int SPARK_WRITES_PER_TASK = 128;

    /** Rows per Spark batch with replica-set grouping: the worker's partitions per batch. */
    private int sparkBatchRows() {
        return JobConfigs.parse(config("t", "x", 1000, false)).sink().maxBatchPartitions();
    }

    /**
     * One run of the Spark Structured Streaming comparison job ({@code deploy/local/spark}) as a
     * whole process, {@code Trigger.AvailableNow} over the topic into a new wide table, which is
     * then read back and checked: {whole ms, rows/s, CPU-s per million input records}.
     */
    private double[] sparkRun(String topic, String table) throws Exception {
        createTable(table);
        Path dir = Files.createDirectories(work.resolve(table));
        Path output = dir.resolve("spark.log");
        Path times = dir.resolve("cpu-times.txt");
        int colon = contactPoint.lastIndexOf(':');
        List<String> javaArguments = new ArrayList<>(List.of("-Xmx" + SPARK_HEAP));
        javaArguments.addAll(SPARK_JAVA_17_OPTIONS);
        javaArguments.addAll(List.of("-cp", sparkClasspath, "io.oncestream.bench.spark.SparkOrders", bootstrap, topic,
                contactPoint.substring(0, colon), contactPoint.substring(colon + 1), datacenter, keyspace, table,
                dir.resolve("checkpoint").toString(), Long.toString(sparkBatch), Integer.toString(SPARK_THREADS),
                Integer.toString(SPARK_WRITES_PER_TASK), sparkGrouping, Integer.toString(sparkBatchRows())));
        ProcessBuilder command = timedJava(null, javaArguments, output, times);
        long started = System.currentTimeMillis();
        int exit = command.start().waitFor();
        long ended = System.currentTimeMillis();
        if (exit != 0) {
            throw new IllegalStateException("Spark exited with " + exit + ", see " + output + ":\n"
                    + String.join("\n", tail(Files.readAllLines(output), 40)));
        }
        checkWideTable(table);
        Files.readAllLines(output).stream().filter(l -> l.startsWith("spark version ")).findFirst()
                .ifPresent(l -> sparkVersion = l.substring("spark version ".length()));
        return new double[] {ended - started, passingRecords / ((ended - started) / 1000.0), childCpuSeconds(times) / records * 1e6};
    }

    /**
     * The options Spark's own launcher gives a Java 17 JVM (Spark reaches into these JDK
     * packages); {@code java -cp} without {@code spark-submit} has to pass them itself.
     */
    private static final List<String> SPARK_JAVA_17_OPTIONS = List.of("-XX:+IgnoreUnrecognizedVMOptions",
            "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
            "--add-opens=java.base/sun.security.action=ALL-UNNAMED", "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
            "-Djdk.reflect.useDirectMethodHandle=false");

    /**
     * Reads a wide table back and checks it holds exactly the records that pass the filter:
     * one row per passing order id, each with its own record's sequence number (the primary key
     * makes order ids unique, so the count and this check leave no room for a missing or an extra row).
     */
    private void checkWideTable(String table) {
        long rows = 0;
        for (com.datastax.oss.driver.api.core.cql.Row row : session.execute(
                com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance("SELECT order_id, seq FROM " + keyspace + "." + table)
                        .setPageSize(5000).setTimeout(java.time.Duration.ofSeconds(30)))) {
            long seq = row.getLong("seq");
            if (!row.getString("order_id").equals("ord-" + seq) || !passingSeqs.get((int) seq)) {
                throw new IllegalStateException(table + ": row " + row.getString("order_id") + " holds seq " + seq
                        + (passingSeqs.get((int) seq) ? "" : ", a record that fails the filter"));
            }
            rows++;
        }
        if (rows != passingRecords) {
            throw new IllegalStateException(table + " holds " + rows + " rows, expected the " + passingRecords + " passing records");
        }
    }

    private static List<String> tail(List<String> lines, int n) {
        return lines.subList(Math.max(0, lines.size() - n), lines.size());
    }

    /**
     * One run of the packaged worker into a new table: {start to first batch, last commit to exit,
     * whole, rows/s, CPU-s/M, then CPU-s/M per kind of thread as {@link ThreadCpu#KINDS} (0 without /proc)}.
     */
    private double[] workerRun(WorkerVariant variant, String topic, String table) throws Exception {
        createTable(table);
        Path dir = Files.createDirectories(work.resolve(table));
        Path output = dir.resolve("worker.log");
        Path times = dir.resolve("cpu-times.txt");
        ProcessBuilder command = workerCommand(variant.java(), variant.jar(), variant.options(),
                Files.writeString(dir.resolve("job.json"), config(topic, table, 50_000, true)), dir, output, times);
        long started = System.currentTimeMillis();
        Process worker = command.start();
        ThreadCpu threads = ThreadCpu.available() ? new ThreadCpu(worker) : null;
        int exit = worker.waitFor();
        long ended = System.currentTimeMillis();
        double[] byKind = new double[ThreadCpu.KINDS.size()];
        if (threads != null) {
            threads.close();
            byKind = threads.secondsByKind();
        }
        List<String> lines = Files.readAllLines(output);
        if (exit != 0) {
            throw new IllegalStateException("worker exited with " + exit + ":\n" + String.join("\n", lines));
        }
        java.util.regex.Pattern commit = java.util.regex.Pattern.compile(
                "^(\\S+)Z .*batch (\\d+) committed: .* written (\\d+), .* in (\\d+) ms .*");
        long firstStart = -1;
        long lastCommit = -1;
        long written = 0;
        for (String line : lines) {
            java.util.regex.Matcher m = commit.matcher(line);
            if (m.matches()) {
                long at = java.time.LocalDateTime.parse(m.group(1)).atZone(java.time.ZoneId.systemDefault()).toInstant().toEpochMilli();
                if (firstStart < 0) {
                    firstStart = at - Long.parseLong(m.group(4));
                }
                lastCommit = at;
                written += Long.parseLong(m.group(3));
            }
        }
        if (firstStart < 0) {
            throw new IllegalStateException("the worker committed no batch:\n" + String.join("\n", lines));
        }
        if (written != passingRecords) {
            throw new IllegalStateException("the worker wrote " + written + " rows, expected " + passingRecords);
        }
        checkWideTable(table);
        double[] out = Arrays.copyOf(new double[] {firstStart - started, ended - lastCommit, ended - started,
            written / ((ended - started) / 1000.0), childCpuSeconds(times) / records * 1e6}, 5 + byKind.length);
        for (int k = 0; k < byKind.length; k++) {
            out[5 + k] = byKind[k] / records * 1e6;
        }
        return out;
    }

    /**
     * The packaged worker as a pod starts it: {@code java} (null: this benchmark's) with the operator's
     * default JVM options in {@code JAVA_TOOL_OPTIONS}, then a 512 MB heap and {@code options}, which win.
     */
    private static ProcessBuilder workerCommand(Path java, Path jar, String options, Path job, Path dir, Path output, Path times) {
        List<String> javaArguments = new ArrayList<>(List.of("-Xmx512m"));
        if (!options.isEmpty()) {
            javaArguments.addAll(List.of(options.split("\\s+")));
        }
        javaArguments.addAll(List.of("-jar", jar.toString(), "worker", "--config", job.toString(), "--checkpoint",
                dir.resolve("checkpoint").toString(), "--worker-index", "0", "--http-host", "127.0.0.1", "--http-port", "0"));
        ProcessBuilder command = timedJava(java, javaArguments, output, times);
        command.environment().put("JAVA_TOOL_OPTIONS", io.oncestream.operator.model.WorkerStatefulSets.AVAILABLE_NOW_JVM_OPTIONS);
        String imageOptions = imageJdkJavaOptions(java);
        if (imageOptions != null) {
            command.environment().put("JDK_JAVA_OPTIONS", imageOptions);
        }
        return command;
    }

    /**
     * The image's {@code JDK_JAVA_OPTIONS} (the default of src/main/docker/Dockerfile) when {@code javaBinary} (null: this
     * benchmark's) is Java 24 or later, as on the image's runtime; null before 24, whose JVMs do not know them.
     */
    static String imageJdkJavaOptions(Path javaBinary) {
        try {
            int feature = Runtime.version().feature();
            if (javaBinary != null) {
                String release = Files.readString(javaBinary.toAbsolutePath().getParent().getParent().resolve("release"));
                java.util.regex.Matcher version = java.util.regex.Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)").matcher(release);
                if (!version.find()) {
                    throw new IllegalStateException("no JAVA_VERSION in the release file of " + javaBinary);
                }
                feature = Integer.parseInt(version.group(1));
            }
            if (feature < 24) {
                return null;
            }
            java.util.regex.Matcher arg = java.util.regex.Pattern.compile("(?m)^ARG JDK_JAVA_OPTIONS=\"([^\"]*)\"")
                    .matcher(Files.readString(Path.of("src/main/docker/Dockerfile")));
            if (!arg.find()) {
                throw new IllegalStateException("src/main/docker/Dockerfile has no ARG JDK_JAVA_OPTIONS=\"...\"");
            }
            return arg.group(1);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A training run of the worker on {@code java} (25 or later) that writes an AOT cache to {@code cache} as it
     * exits ({@code -XX:AOTCacheOutput}): over the whole topic, or ({@code readNothing}) starting at its end, so
     * that the worker connects, plans, finds no record and exits.
     */
    private void aotTraining(Path java, Path jar, String topic, String table, boolean readNothing, Path cache) throws Exception {
        createTable(table);
        Path dir = Files.createDirectories(work.resolve(table));
        String job = config(topic, table, 50_000, true);
        if (readNothing) {
            job = job.replace("\"maxRecordsPerBatch\"", "\"startingOffsets\": \"latest\", \"maxRecordsPerBatch\"");
        }
        Path output = dir.resolve("worker.log");
        Process worker = workerCommand(java, jar, (workerJavaOptions.get(0).trim() + " -XX:AOTCacheOutput=" + cache).trim(),
                Files.writeString(dir.resolve("job.json"), job), dir, output, dir.resolve("cpu-times.txt")).start();
        int exit = worker.waitFor();
        if (exit != 0 || !Files.exists(cache)) {
            throw new IllegalStateException("the AOT training run exited with " + exit + (Files.exists(cache) ? "" : " and wrote no "
                    + cache) + "; its log, " + output + ", ends:\n" + String.join("\n", tail(Files.readAllLines(output), 40)));
        }
    }

    /**
     * A JVM of {@code java} (null: this benchmark's Java) with {@code javaArguments}, run by sh, whose {@code times}
     * writes the CPU time its children used (user, system: the whole JVM's) to {@code times} for
     * {@link #childCpuSeconds}; stdout and stderr go to {@code output}.
     */
    private static ProcessBuilder timedJava(Path java, List<String> javaArguments, Path output, Path times) {
        List<String> commandLine = new ArrayList<>(List.of("sh", "-c", "\"$@\"; status=$?; times > \"$CPU_TIMES\"; exit $status", "sh",
                (java != null ? java : Path.of(System.getProperty("java.home"), "bin", "java")).toString()));
        commandLine.addAll(javaArguments);
        ProcessBuilder command = new ProcessBuilder(commandLine).redirectErrorStream(true).redirectOutput(output.toFile());
        command.environment().put("CPU_TIMES", times.toString());
        return command;
    }

    /** CPU-s per million input records per kind of thread ({@link ThreadCpu#KINDS} order), with shares. */
    private static String byKind(double[] perKind, String note) {
        if (!ThreadCpu.available()) {
            return "no /proc: no breakdown by thread";
        }
        double sampled = Arrays.stream(perKind).sum();
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < perKind.length; k++) {
            out.append(k == 0 ? "" : ", ").append(String.format("%s %.1f (%.0f %%)", ThreadCpu.KINDS.get(k), perKind[k],
                    sampled == 0 ? 0 : 100 * perKind[k] / sampled));
        }
        return out.append("; ").append(note).toString();
    }

    /** User + system seconds of the children, from the second line of sh's "times" ("0m9.120000s 0m0.410000s"). */
    private static double childCpuSeconds(Path times) throws java.io.IOException {
        List<String> lines = Files.readAllLines(times);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)m([\\d.]+)s\\s+(\\d+)m([\\d.]+)s").matcher(lines.get(1));
        if (!m.matches()) {
            throw new IllegalStateException("unexpected output of times in " + times + ": " + lines);
        }
        return Integer.parseInt(m.group(1)) * 60 + Double.parseDouble(m.group(2)) + Integer.parseInt(m.group(3)) * 60
                + Double.parseDouble(m.group(4));
    }

    /**
     * Latency alone, at a given rate (records/s) on the wide table, after a warm-up run of the
     * engine over the benchmark's records; prints where the time goes (before a record's batch
     * starts writing / writing it) and the benchmark JVM's GC pauses during the run.
     */
    private void latencyOnly(double rate, double seconds) throws Exception {
        String topic = "bench-latency-" + System.currentTimeMillis();
        freshKeyspaceAndTopic(topic);
        engineRun(topic, "warmup", true, records);
        double[] l = latencyRun(topic + "-latency", rate, seconds);
        System.out.println();
        System.out.printf("RESULTS (latency alone at %,.0f rec/s for %.0f s, wide table)%n", rate, seconds);
        System.out.printf("  wide latency at %,.0f rec/s : p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%n",
                rate, l[0], l[1], l[2], (long) l[3]);
    }

    /** An empty benchmark keyspace, and {@code topic} with three partitions and the benchmark's records; returns their values. */
    private List<String> freshKeyspaceAndTopic(String topic) throws Exception {
        session.execute("DROP KEYSPACE IF EXISTS " + keyspace);
        session.execute("CREATE KEYSPACE " + keyspace + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        createTopic(topic, 3);
        log("producing %,d records to %s", records, topic);
        return produce(topic, records);
    }

    private static double medianOf(List<double[]> results, int column) {
        return median(results.stream().mapToDouble(r -> r[column]).sorted().toArray());
    }

    /** One run: rows/s from its first record to its last acknowledgement, CPU-s per million records, rows/s start to return. */
    private record Run(double rowsPerSecond, double cpuPerMillion, double wholeRowsPerSecond) {
        @Override
        public String toString() {
            return String.format("%,.0f rows/s, %.1f CPU-s/M", rowsPerSecond, cpuPerMillion);
        }
    }

    private static double[] ratios(List<Run[]> results, java.util.function.ToDoubleFunction<Run[]> ratio) {
        return results.stream().mapToDouble(ratio).sorted().toArray();
    }

    /** CPU time of this JVM, all threads (engine, Kafka consumer, driver, GC), in ns. */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * The job's filter and columns over every record on one thread, CPU only, alternating
     * between decoding only the fields the expressions read and decoding whole values;
     * returns the best records/s of each.
     */
    private static double[] decodingRatio(List<String> values) {
        RecordTransformer pruned = transformer();
        double[] rates = transformRates(values, pruned, pruned.decodingWholeValues());
        log("filter and columns on one thread, %d-byte records: %,.0f records/s decoding the fields read, %,.0f decoding whole values",
                values.get(0).length(), rates[0], rates[1]);
        return rates;
    }

    /**
     * The job's filter and columns over every record on one thread, CPU only, alternating between
     * its filter answered from the decoded fields where it can be and its filter always evaluated
     * by CEL's interpreter; returns the best records/s of each.
     */
    private static double[] filterRatio(List<String> values) {
        RecordTransformer fields = transformer();
        double[] rates = transformRates(values, fields, fields.filteringWithCelOnly());
        log("filter and columns on one thread, %d-byte records: %,.0f records/s with the filter answered from the fields,"
                + " %,.0f with CEL evaluating it", values.get(0).length(), rates[0], rates[1]);
        return rates;
    }

    /** Best records/s of {@code a} and of {@code b} over five alternating rounds, and the record size. */
    private static double[] transformRates(List<String> values, RecordTransformer a, RecordTransformer b) {
        List<SourceRecord> input = new ArrayList<>(values.size());
        for (int i = 0; i < values.size(); i++) {
            input.add(new SourceRecord("orders", 0, i, 0, null, values.get(i).getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));
        }
        double bestA = 0;
        double bestB = 0;
        for (int round = 0; round < 5; round++) { // the first rounds warm the JIT up for both
            bestA = Math.max(bestA, transformRate(a, input));
            bestB = Math.max(bestB, transformRate(b, input));
        }
        return new double[] {bestA, bestB, values.get(0).length()};
    }

    private static void printDecoding(double[] flat, double[] rich, double[] filter) {
        System.out.printf("  filter+map, filter from fields / CEL : %.2f on the benchmark's %.0f-byte records (%,.0f vs %,.0f records/s;"
                + " the filter %s answered from the decoded fields, or by CEL's interpreter); one thread%n",
                filter[0] / filter[1], filter[2], filter[0], filter[1], FILTER);
        System.out.printf("  filter+map, fields read / all     : %.2f on the benchmark's %.0f-byte records (%,.0f vs %,.0f records/s),"
                + " %.2f on %.0f-byte records with nested fields no expression reads (%,.0f vs %,.0f); one thread%n",
                flat[0] / flat[1], flat[2], flat[0], flat[1], rich[0] / rich[1], rich[2], rich[0], rich[1]);
    }

    /** The same records with what orders usually carry besides: customer details, items, a shipping address. */
    private static List<String> richer(List<String> values) {
        String more = ", \"customerDetails\": {\"name\": \"Ada Lovelace\", \"email\": \"ada@example.com\", \"tier\": \"gold\"},"
                + " \"items\": [{\"sku\": \"A-1\", \"qty\": 2, \"price\": 9.5}, {\"sku\": \"B-2\", \"qty\": 1, \"price\": 20.0}],"
                + " \"shipping\": {\"country\": \"DE\", \"city\": \"Berlin\", \"street\": \"Unter den Linden 1\", \"zip\": \"10117\"}}";
        return values.stream().map(v -> v.substring(0, v.lastIndexOf('}')) + more).toList();
    }

    private static double transformRate(RecordTransformer transformer, List<SourceRecord> input) {
        long start = System.nanoTime();
        int rows = 0;
        for (SourceRecord record : input) {
            if (transformer.apply(record) instanceof TransformResult.Row) {
                rows++;
            }
        }
        if (rows != input.size()) {
            throw new IllegalStateException(rows + " rows of " + input.size() + " records: every benchmark record passes");
        }
        return input.size() / ((System.nanoTime() - start) / 1e9);
    }

    // ---- the raw driver loader: same rows, same statement, same grouping and concurrency ----

    private Run rawRun(List<String> values, String table, int inFlight, int[] batching) throws Exception {
        createTable(table);
        PreparedStatement insert = session.prepare("INSERT INTO " + keyspace + "." + table
                + " (customer, order_id, amount, seq) VALUES (?, ?, ?, ?) USING TIMESTAMP ?");
        // Records are parsed into memory before the clock starts (the loader reads no Kafka and
        // parses no JSON); binding, grouping and writing them is timed, as the engine's are.
        List<Object[]> orders = new ArrayList<>(values.size());
        for (String v : values) {
            String[] f = Row.parse(v);
            orders.add(new Object[] {f[0], f[1], Double.parseDouble(f[2]), Long.parseLong(f[3])});
        }
        long cpu = cpuNanos();
        long start = System.nanoTime();
        Map<String, List<BoundStatement>> byCustomer = new LinkedHashMap<>();
        long ts = 1;
        boolean wide = table.startsWith("wide");
        for (Object[] o : orders) {
            // Rows that share a Cassandra partition share batches: the customer, or on the wide table the order itself.
            // Typed setters: the driver's cheapest way to bind (no codec look-up by value).
            byCustomer.computeIfAbsent((String) (wide ? o[1] : o[0]), k -> new ArrayList<>()).add(insert.boundStatementBuilder()
                    .setString(0, (String) o[0]).setString(1, (String) o[1]).setDouble(2, (Double) o[2]).setLong(3, (Long) o[3])
                    .setLong(4, ts++).setIdempotence(true).build());
        }
        List<Statement<?>> statements = UnloggedBatches.group(byCustomer, batching[0], batching[1], batching[2],
                UnloggedBatches.replicas(session));
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<?>> futures = new ArrayList<>(statements.size());
        AtomicLong lastAck = new AtomicLong();
        for (Statement<?> s : statements) {
            permits.acquireUninterruptibly();
            futures.add(session.executeAsync(s).toCompletableFuture().whenComplete((r, e) -> {
                lastAck.accumulateAndGet(System.nanoTime(), Math::max);
                permits.release();
                if (e != null) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
        double cpuSeconds = (cpuNanos() - cpu) / 1e9;
        double rate = values.size() / ((lastAck.get() - start) / 1e9);
        return new Run(rate, cpuSeconds / values.size() * 1e6, rate);
    }

    // ---- the engine, in process, availableNow over the whole topic ----

    /**
     * The engine over the whole topic ({@code availableNow}). Rows/s from the moment its first
     * record is mapped to the last acknowledgement, as the raw loader's; CPU and the whole-run
     * rate from {@code run()} to its return (everything is connected and prepared before, as for
     * the loader).
     */
    private Run engineRun(String topic, String table, boolean fsync, int expectedRows) throws Exception {
        createTable(table);
        JobConfig config = JobConfigs.parse(config(topic, table, 50_000, true));
        SpanSink.Span span = new SpanSink.Span();
        try (Assembly engine = new Assembly(config, work.resolve(table), fsync, sink -> new SpanSink(sink, span))) {
            long cpu = cpuNanos();
            long start = System.nanoTime();
            engine.engine.run();
            long end = System.nanoTime();
            double cpuSeconds = (cpuNanos() - cpu) / 1e9;
            long written = engine.progress.snapshot().totals().written();
            log("  %s: last batch %s", table, engine.progress.snapshot().lastBatch().durationsMs());
            if (written != expectedRows && !table.equals("warmup")) {
                throw new IllegalStateException("engine wrote " + written + " rows, expected " + expectedRows);
            }
            return new Run(written / span.seconds(), cpuSeconds / written * 1e6, written / ((end - start) / 1e9));
        }
    }

    // ---- latency: producer at a fixed rate, engine running continuously ----

    /**
     * Seconds of producing at the rate before records are measured: the first seconds of a run
     * measure its start (a new table's first writes and prepared statement, the producer's
     * first sends), not the sustained rate the targets are about.
     */
    private static final int LATENCY_WARMUP_SECONDS = 5;
    /** {@code --latency-warmup-seconds}: seconds of producing before records are measured ({@link #LATENCY_WARMUP_SECONDS}). */
    private int latencyWarmupSeconds = LATENCY_WARMUP_SECONDS;

    private double[] latencyRun(String topic, double rate, double seconds) throws Exception {
        createTopic(topic, 3);
        String table = topic.endsWith("-quarter") ? "wide_latency_quarter" : "wide_latency";
        createTable(table);
        JobConfig config = JobConfigs.parse(config(topic, table, 50_000, false)
                .replace("\"intervalMs\": 1000", "\"intervalMs\": " + latencyIntervalMs)
                .replace("\"maxRecordsPerBatch\"", "\"properties\": " + consumerProperties(latencyConsumer) + ", \"maxRecordsPerBatch\""));
        LatencySink.Recorder recorder = new LatencySink.Recorder();
        AtomicBoolean stop = new AtomicBoolean();
        try (Assembly engine = new Assembly(config, work.resolve(table), true, sink -> new LatencySink(sink, recorder), stop)) {
            Thread runner = new Thread(engine.engine::run, "bench-engine");
            runner.start();
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
            String cpuUsed = ProcessCpu.available() ? cpu.summary() + "; the benchmark JVM's by thread: " + cpu.threads(EngineBenchmark::threadKind)
                    : "no /proc/stat";
            long deadline = System.currentTimeMillis() + 60_000;
            while (engine.progress.snapshot().totals().written() < produced && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
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
    private static String consumerProperties(String list) {
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
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(1))) {
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
                String v = Row.json(random, i);
                producer.send(new ProducerRecord<>(topic, Row.parse(v)[1], v));
            }
            if (!windowOpen) {
                cpu.start(); // nothing was due after measureFrom: an empty window, not a missing one
            }
            cpu.stop();
            producer.flush();
        }
        return total;
    }

    // ---- plumbing ----

    /** The worker's engine assembly with a choice of fsync and a wrapper of its sink that measures, and its progress. */
    private final class Assembly implements AutoCloseable {
        final ProgressTracker progress;
        final EngineAssembly engine;

        Assembly(JobConfig config, Path dir, boolean fsync, UnaryOperator<RowSink> measuring) {
            this(config, dir, fsync, measuring, new AtomicBoolean());
        }

        Assembly(JobConfig config, Path dir, boolean fsync, UnaryOperator<RowSink> measuring, AtomicBoolean stop) {
            progress = new ProgressTracker(config.jobId(), 0, 1);
            EngineAssembly.Options options = EngineAssembly.Options.production()
                    .withFiles(fsync ? DurableFiles.synced() : DurableFiles.unsyncedForBenchmark())
                    .withSinkWrapper(measuring);
            engine = new EngineAssembly(config, 0, dir, session, progress, stop::get, options);
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    private String config(String topic, String table, int maxRecords, boolean availableNow) {
        return """
                {"jobId": "bench/%s", "source": {"bootstrapServers": "%s", "topics": ["%s"], "maxRecordsPerBatch": %d},
                 "filter": "%s",
                 "sink": {"contactPoints": ["%s"], "localDatacenter": "%s", "keyspace": "%s", "table": "%s", "consistency": "ONE",
                          "columns": %s},
                 "trigger": {"intervalMs": 1000, "availableNow": %s}}
                """.formatted(table, bootstrap, topic, maxRecords, FILTER, contactPoint, datacenter, keyspace, table, COLUMNS, availableNow);
    }

    /** The benchmark job's filter and columns: every benchmark record passes. */
    private static final String FILTER = "value.status == 'PAID' && value.amount > 100.0";
    private static final String COLUMNS =
            "{\"customer\": \"value.customer\", \"order_id\": \"value.id\", \"amount\": \"value.amount\", \"seq\": \"value.seq\"}";

    /** The benchmark job's filter and columns, compiled as a worker compiles them. */
    private static RecordTransformer transformer() {
        return RecordTransformer.compile(JobConfigs.parse("""
                {"jobId": "bench/decoding", "source": {"bootstrapServers": "unused:9092", "topics": ["orders"]},
                 "filter": "%s", "sink": {"contactPoints": ["unused:9042"], "localDatacenter": "dc", "keyspace": "k",
                 "table": "t", "columns": %s}}
                """.formatted(FILTER, COLUMNS)));
    }

    /**
     * A fresh table for a run. The previous run's table is dropped first and the node given a
     * few seconds, so that neither side of a ratio is timed while Cassandra flushes and compacts
     * what the run before it wrote (the measured rows were counted: nothing reads them later).
     */
    private void createTable(String table) throws InterruptedException {
        if (previousTable != null) {
            session.execute("DROP TABLE IF EXISTS " + keyspace + "." + previousTable);
        }
        previousTable = table;
        Thread.sleep(3000);
        session.execute("CREATE TABLE IF NOT EXISTS " + keyspace + "." + table
                + (table.startsWith("wide") ? " (order_id text PRIMARY KEY, customer text, amount double, seq bigint)"
                        : " (customer text, order_id text, amount double, seq bigint, PRIMARY KEY ((customer), order_id))"));
        session.execute("TRUNCATE " + keyspace + "." + table);
    }

    private String previousTable;
    /** The sequence numbers of the records {@link #produce} made that pass the filter. */
    private java.util.BitSet passingSeqs;

    private void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    private List<String> produce(String topic, int count) {
        Random random = new Random(1);
        List<String> values = new ArrayList<>(count);
        passingRecords = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(20))) {
            for (int i = 0; i < count; i++) {
                String v = Row.json(random, i, passing >= 1 || random.nextDouble() < passing);
                values.add(v);
                producer.send(new ProducerRecord<>(topic, Row.parse(v)[1], v));
            }
            producer.flush();
        }
        passingSeqs = new java.util.BitSet(count);
        for (int i = 0; i < count; i++) {
            passingSeqs.set(i, Row.passes(values.get(i)));
        }
        passingRecords = passingSeqs.cardinality();
        return values;
    }

    private Properties producerProps(int lingerMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // one request in flight: a freshly created topic can otherwise lose its first batch (KAFKA-15591)
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        return p;
    }

    private static String fmt(double[] ratios) {
        return Arrays.stream(ratios).mapToObj(r -> String.format("%.2f", r)).toList().toString();
    }

    private static double median(double[] sorted) {
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    private static void log(String format, Object... args) {
        System.out.printf("[bench] " + format + "%n", args);
    }

    /** The benchmark's records: every one passes the filter, so rows = records. */
    static final class Row {
        static String json(Random random, long seq) {
            return json(random, seq, true);
        }

        /**
         * An order that passes the benchmark's filter ({@code status == 'PAID' && amount > 100.0})
         * or, half and half, fails it by its status or by its amount.
         */
        static String json(Random random, long seq, boolean passes) {
            boolean paid = passes || random.nextBoolean();
            double amount = passes || !paid ? 101 + random.nextInt(9000) / 100.0 : 1 + random.nextInt(9900) / 100.0;
            return "{\"id\": \"ord-" + seq + "\", \"status\": \"" + (paid ? "PAID" : "PENDING") + "\", \"amount\": " + amount
                    + ", \"customer\": \"cust-" + random.nextInt(2000) + "\", \"seq\": " + seq
                    + ", \"note\": \"benchmark order with a little padding to reach about 150 bytes\"}";
        }

        /** Whether the order passes the benchmark's filter, decided the raw loader's way. */
        static boolean passes(String json) {
            return json.contains("\"status\": \"PAID\"") && Double.parseDouble(field(json, "amount")) > 100.0;
        }

        /** {customer, id, amount, seq} without a JSON library: the raw loader's own parsing. */
        static String[] parse(String json) {
            return new String[] {field(json, "customer"), field(json, "id"), field(json, "amount"), field(json, "seq")};
        }

        private static String field(String json, String name) {
            int i = json.indexOf("\"" + name + "\": ") + name.length() + 4;
            int end = json.charAt(i) == '"' ? json.indexOf('"', i + 1) + 1 : json.indexOf(',', i);
            return json.substring(i, end).replace("\"", "");
        }
    }
}
