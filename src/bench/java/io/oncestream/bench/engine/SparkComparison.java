package io.oncestream.bench.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.oncestream.engine.config.JobConfigs;

/**
 * The same job in Spark Structured Streaming with the Spark Cassandra Connector
 * ({@code deploy/local/spark}), run as a whole process in each round of the worker-process
 * mode, on the same topic and Cassandra ({@code benchmark.sh --worker-process N --spark}); and,
 * in its latency mode, a contender of the latency side by side ({@link LatencyContenders}).
 */
final class SparkComparison {

    /** Spark's task threads (local[N]) and heap; writes in flight per task, so that tasks × writes = the worker's 256. */
    static final int SPARK_THREADS = 2;
    static final String SPARK_HEAP = "2g";
    private static final int SPARK_WRITES_PER_TASK = 128;

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

    private final BenchSetup setup;
    /** The class path of the comparison job ({@code --spark-classpath}, set by {@code benchmark.sh --spark}). */
    private final String sparkClasspath;
    /** Records per Spark micro-batch ({@code --spark-batch}; 0: everything in one). */
    final long sparkBatch;
    /**
     * How the Spark Cassandra Connector groups rows into unlogged batches ({@code --spark-grouping}):
     * {@code partition} (its default: on the wide table every row alone) or {@code replica_set}
     * (partitions with the same replicas, as the worker does, at most the worker's
     * {@code maxBatchPartitions} rows per batch).
     */
    final String sparkGrouping;
    /** The Spark version the comparison job ran with, as it printed it. */
    private String sparkVersion = "?";

    SparkComparison(BenchSetup setup, String sparkClasspath, long sparkBatch, String sparkGrouping) {
        this.setup = setup;
        this.sparkClasspath = sparkClasspath;
        this.sparkBatch = sparkBatch;
        this.sparkGrouping = sparkGrouping;
    }

    /** The Spark version of the last run, or "?" before one. */
    String version() {
        return sparkVersion;
    }

    /** Rows per Spark batch with replica-set grouping: the worker's partitions per batch. */
    int sparkBatchRows() {
        return JobConfigs.parse(setup.config("t", "x", 1000, false)).sink().maxBatchPartitions();
    }

    /**
     * One run of the Spark Structured Streaming comparison job ({@code deploy/local/spark}) as a
     * whole process, {@code Trigger.AvailableNow} over the topic into a new wide table, which is
     * then read back and checked: {whole ms, rows/s, CPU-s per million input records}.
     */
    double[] run(String topic, String table, BenchSetup.Produced produced) throws Exception {
        setup.createTable(table);
        Path dir = Files.createDirectories(setup.work.resolve(table));
        Path output = dir.resolve("spark.log");
        Path times = dir.resolve("cpu-times.txt");
        ProcessBuilder command = WorkerProcessBenchmark.timedJava(null, javaArguments(topic, table, dir, null), output, times);
        long started = System.currentTimeMillis();
        int exit = command.start().waitFor();
        long ended = System.currentTimeMillis();
        if (exit != 0) {
            throw new IllegalStateException("Spark exited with " + exit + ", see " + output + ":\n"
                    + String.join("\n", WorkerProcessBenchmark.tail(Files.readAllLines(output), 40)));
        }
        setup.checkWideTable(table, produced);
        Files.readAllLines(output).stream().filter(l -> l.startsWith("spark version ")).findFirst()
                .ifPresent(l -> sparkVersion = l.substring("spark version ".length()));
        return new double[] {ended - started, produced.passingRecords() / ((ended - started) / 1000.0),
            WorkerProcessBenchmark.childCpuSeconds(times) / setup.records * 1e6};
    }

    /**
     * The JVM options and arguments of the comparison job over {@code topic} into {@code table},
     * with its checkpoint in {@code dir}: {@code Trigger.AvailableNow}, or with
     * {@code triggerMs} (not null) the latency mode's processing-time trigger.
     */
    List<String> javaArguments(String topic, String table, Path dir, Long triggerMs) {
        String contactPoint = setup.contactPoint;
        int colon = contactPoint.lastIndexOf(':');
        List<String> javaArguments = new ArrayList<>(List.of("-Xmx" + SPARK_HEAP));
        javaArguments.addAll(SPARK_JAVA_17_OPTIONS);
        javaArguments.addAll(List.of("-cp", sparkClasspath, "io.oncestream.bench.spark.SparkOrders", setup.bootstrap, topic,
                contactPoint.substring(0, colon), contactPoint.substring(colon + 1), setup.datacenter, setup.keyspace, table,
                dir.resolve("checkpoint").toString(), Long.toString(sparkBatch), Integer.toString(SPARK_THREADS),
                Integer.toString(SPARK_WRITES_PER_TASK), sparkGrouping, Integer.toString(sparkBatchRows())));
        if (triggerMs != null) {
            javaArguments.add(Long.toString(triggerMs));
        }
        return javaArguments;
    }
}
