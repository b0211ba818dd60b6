package io.oncestream.bench.engine;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.bench.engine.RecordLatencies.AckedBatch;
import io.oncestream.bench.engine.RecordLatencies.Range;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.contract.WorkerEndpoints;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.AppendBatchLog;
import io.oncestream.operator.model.WorkerStatefulSets;

/**
 * The contenders of the latency side by side, each run as a whole process of its own on a new
 * topic and table, so that each one's CPU is its process's and nothing of one warms another's JIT:
 * <ul>
 * <li>the engine: the packaged worker as a pod runs it ({@code quarkus-run.jar worker}, the image's
 *     JDK, a worker pod's {@code JAVA_TOOL_OPTIONS} and {@code JDK_JAVA_OPTIONS}, a 512 MB heap, WAL
 *     and commits fsync'd), a continuous job. Its batches are read from its own checkpoint after
 *     it stops: each {@code offsets/N} says which offsets batch N held, and each
 *     {@code commits/N} its {@code committedAtMs}, taken right after the last write's
 *     acknowledgement (the job keeps every batch: {@code checkpoint.retainBatches} is raised, which
 *     spares the worker two file deletions per batch and nothing else);</li>
 * <li>the floor: {@link AtLeastOnceFloor} on the same JDK with the same JVM options and heap;</li>
 * <li>Spark: {@code deploy/local/spark}'s job in its latency mode ({@link SparkComparison}).</li>
 * </ul>
 */
final class LatencyContenders {

    private static final Pattern COMMIT = Pattern.compile(".*batch (\\d+) committed: .* written (\\d+),.*");
    private static final Pattern SERVING = Pattern.compile(".*serving http on ([^ ]+):(\\d+).*");
    /** How the Spark job's latency mode starts its lines (SparkOrders' constants: another project, not on this class path). */
    private static final String SPARK_STARTED = "latency-started";
    private static final String SPARK_ACK = "latency-ack";
    private static final String SPARK_PROGRESS = "latency-progress";
    /** Seconds a contender may take to start, and to write the last records once the producer is done. */
    private static final int START_SECONDS = 180;
    private static final int DRAIN_SECONDS = 120;

    private final BenchSetup setup;
    /** The JDK of the worker and the floor: the images' runtime ({@code --worker-jdk}), or null for this JVM's. */
    private final Path workerJdk;
    /** The engine's {@code trigger.intervalMs} ({@code --latency-interval-ms}). */
    private final long intervalMs;
    /** Kafka consumer properties of the job, engine and floor alike ({@code --latency-consumer}). */
    private final String consumerProperties;
    private final SparkComparison spark;
    /** Spark's processing-time trigger in ms ({@code --spark-trigger-ms}; 0: back to back). */
    private final long sparkTriggerMs;
    /** An earlier build of the worker ({@code --baseline DIR}, a copy of its {@code target/quarkus-app}), or null. */
    private final Path baseline;

    /** The name of the earlier build's engine in the results. */
    static final String BEFORE = "before";

    LatencyContenders(BenchSetup setup, Path workerJdk, long intervalMs, String consumerProperties, SparkComparison spark,
            long sparkTriggerMs, Path baseline) {
        this.setup = setup;
        this.workerJdk = workerJdk;
        this.intervalMs = intervalMs;
        this.consumerProperties = consumerProperties;
        this.spark = spark;
        this.sparkTriggerMs = sparkTriggerMs;
        this.baseline = baseline;
        if (baseline != null && !Files.exists(baseline.resolve("quarkus-run.jar"))) {
            throw new IllegalArgumentException(baseline.resolve("quarkus-run.jar") + " is missing: --baseline names a copy of an"
                    + " earlier build's target/quarkus-app");
        }
    }

    /** How a run of a contender starts over {@code topic} into {@code table}, its files in {@code dir}; it returns once the contender waits for records. */
    @FunctionalInterface
    interface Starter {
        Running start(String topic, String table, Path dir) throws Exception;
    }

    /** A contender: its name in the results, and how a run of it starts. */
    record Contender(String name, Starter starter) {

        Running start(String topic, String table, Path dir) throws Exception {
            return starter.start(topic, table, dir);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** The engine, the earlier build's if there is one, the floor, then Spark if it is configured. */
    List<Contender> all() {
        List<Contender> all = new ArrayList<>(List.of(new Contender("engine", (t, table, dir) -> engine(Path.of("target/quarkus-app"),
                t, table, dir))));
        if (baseline != null) {
            all.add(new Contender(BEFORE, (t, table, dir) -> engine(baseline, t, table, dir)));
        }
        all.add(new Contender("floor", this::floor));
        if (spark != null) {
            all.add(new Contender("Spark", this::spark));
        }
        return all;
    }

    /** The benchmark's continuous job over {@code topic} into {@code table}, for the worker and the floor alike. */
    String job(String topic, String table) {
        return setup.config(topic, table, 50_000, false)
                .replace("\"intervalMs\": 1000", "\"intervalMs\": " + intervalMs)
                .replace("\"maxRecordsPerBatch\"", "\"properties\": " + LatencyBenchmark.consumerProperties(consumerProperties)
                        + ", \"maxRecordsPerBatch\"")
                .replace("\"trigger\"", "\"checkpoint\": {\"retainBatches\": 1000000000}, \"trigger\"");
    }

    private Running engine(Path app, String topic, String table, Path dir) throws Exception {
        Path jar = app.resolve("quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: build the worker first (mvn package -DskipTests)");
        }
        Path checkpoint = dir.resolve("checkpoint");
        Path output = dir.resolve("worker.log");
        Process process = podJava(List.of("-jar", jar.toString(), "worker", "--config",
                Files.writeString(dir.resolve("job.json"), job(topic, table)).toString(), "--checkpoint", checkpoint.toString(),
                "--worker-index", "0", "--http-host", "127.0.0.1", "--http-port", "0"), output).start();
        Running running = new Running("engine", process, output) {
            @Override
            long written(List<String> lines) {
                long written = 0;
                for (String line : lines) {
                    Matcher m = COMMIT.matcher(line);
                    if (m.matches()) {
                        written += Long.parseLong(m.group(2));
                    }
                }
                return written;
            }

            @Override
            String phases(long fromMs, long toMs) throws IOException {
                return batchPhases(Files.readAllLines(output), fromMs, toMs);
            }

            @Override
            List<AckedBatch> batches(List<String> lines) {
                AppendBatchLog<BatchOffsets> offsets = AppendBatchLog.readOnly(checkpoint.resolve("offsets"), BatchOffsets.class);
                AppendBatchLog<BatchCommit> commits = AppendBatchLog.readOnly(checkpoint.resolve("commits"), BatchCommit.class);
                List<AckedBatch> batches = new ArrayList<>();
                for (long id : commits.batchIds()) {
                    List<Range> ranges = new ArrayList<>();
                    offsets.get(id).orElseThrow().partitions().forEach((key, range) -> ranges.add(
                            new Range(TopicPartitionKey.parse(key).partition(), range.start(), range.end())));
                    batches.add(new AckedBatch(commits.get(id).orElseThrow().committedAtMs(), ranges));
                }
                return batches;
            }
        };
        return running.once(() -> {
            Matcher serving = SERVING.matcher(running.awaitLine(SERVING, START_SECONDS));
            serving.matches(); // the line awaited matches: this sets the groups
            awaitReady(URI.create("http://" + serving.group(1) + ":" + serving.group(2) + WorkerEndpoints.READY), running);
        });
    }

    private Running floor(String topic, String table, Path dir) throws Exception {
        Path output = dir.resolve("floor.log");
        Process process = podJava(List.of("-cp", System.getProperty("java.class.path"), AtLeastOnceFloor.class.getName(),
                Files.writeString(dir.resolve("job.json"), job(topic, table)).toString()), output).start();
        Running running = new Running("floor", process, output) {
            @Override
            long written(List<String> lines) {
                return lines.stream().mapToLong(AtLeastOnceFloor::rowsOf).sum();
            }

            @Override
            List<AckedBatch> batches(List<String> lines) {
                return lines.stream().map(AtLeastOnceFloor::parseBatchLine).filter(b -> b != null).toList();
            }
        };
        return running.once(() -> running.awaitLine(Pattern.compile(Pattern.quote(AtLeastOnceFloor.READY)), START_SECONDS));
    }

    private Running spark(String topic, String table, Path dir) throws Exception {
        Path output = dir.resolve("spark.log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(spark.javaArguments(topic, table, dir, sparkTriggerMs));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        Running running = new Running("Spark", builder.start(), output) {
            @Override
            long written(List<String> lines) {
                return lines.stream().filter(l -> l.startsWith(SPARK_PROGRESS + "\t"))
                        .mapToLong(l -> Long.parseLong(l.split("\t")[2])).sum();
            }

            @Override
            List<AckedBatch> batches(List<String> lines) throws IOException {
                return sparkBatches(lines);
            }
        };
        return running.once(() -> running.awaitLine(Pattern.compile(Pattern.quote(SPARK_STARTED) + "\t.*"), START_SECONDS));
    }

    /**
     * The Spark job's batches from its lines: each {@code latency-ack} (batch id, ack ms) with the
     * offsets of the {@code latency-progress} line of the same batch (Spark's JSON,
     * {@code {"topic":{"0":12,...}}}; a first batch has no start: the topic's beginning).
     */
    static List<AckedBatch> sparkBatches(List<String> lines) throws IOException {
        ObjectMapper json = new ObjectMapper();
        Map<Long, List<Range>> ranges = new HashMap<>();
        Map<Long, Long> acks = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split("\t");
            if (f[0].equals(SPARK_ACK) && f.length == 3) {
                acks.put(Long.parseLong(f[1]), Long.parseLong(f[2]));
            } else if (f[0].equals(SPARK_PROGRESS) && f.length == 5) {
                JsonNode start = json.readTree(f[3]);
                List<Range> batch = new ArrayList<>();
                json.readTree(f[4]).fields().forEachRemaining(topic -> topic.getValue().fields().forEachRemaining(p -> {
                    JsonNode from = start == null || start.isNull() ? null : start.path(topic.getKey()).get(p.getKey());
                    batch.add(new Range(Integer.parseInt(p.getKey()), from == null ? 0 : from.asLong(), p.getValue().asLong()));
                }));
                ranges.put(Long.parseLong(f[1]), batch);
            }
        }
        List<AckedBatch> batches = new ArrayList<>();
        acks.forEach((id, ack) -> batches.add(new AckedBatch(ack, ranges.getOrDefault(id, List.of()))));
        return batches;
    }

    /**
     * {@code java} of the worker's JDK with a worker pod's JVM options ({@code JAVA_TOOL_OPTIONS} of a
     * continuous job, the image's {@code JDK_JAVA_OPTIONS}) and a 512 MB heap, as the worker-process
     * mode runs the worker; standard output and error to {@code output}.
     */
    private ProcessBuilder podJava(List<String> arguments, Path output) {
        Path java = (workerJdk != null ? workerJdk : Path.of(System.getProperty("java.home"))).resolve("bin/java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx512m"));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("JAVA_TOOL_OPTIONS", WorkerStatefulSets.DEFAULT_JVM_OPTIONS);
        String imageOptions = WorkerProcessBenchmark.imageJdkJavaOptions(workerJdk == null ? null : java);
        if (imageOptions != null) {
            builder.environment().put("JDK_JAVA_OPTIONS", imageOptions);
        } else {
            builder.environment().remove("JDK_JAVA_OPTIONS");
        }
        return builder;
    }

    /** Polls the worker's readiness endpoint until it answers 200: connected to Cassandra and Kafka, its engine running. */
    private static void awaitReady(URI ready, Running running) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.currentTimeMillis() + START_SECONDS * 1000L;
        while (true) {
            running.checkAlive();
            try {
                if (http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not answering yet
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the worker was not ready " + START_SECONDS + " s after it started; its log: "
                        + running.output);
            }
            Thread.sleep(200);
        }
    }

    private static final Pattern PHASES = Pattern.compile("^(\\S+) .*batch \\d+ committed: .*\\{(.*)\\}$");

    /**
     * p50 / p99 of each phase of the worker's batches logged in {@code [fromMs, toMs)} (its lines
     * "batch N committed: ... {planning=3, reading=2, writing=6, committing=2, total=13}"), in ms,
     * and how many batches: where the engine's time goes next to the floor's.
     */
    static String batchPhases(List<String> lines, long fromMs, long toMs) {
        Map<String, List<Long>> byPhase = new java.util.LinkedHashMap<>();
        int batches = 0;
        for (String line : lines) {
            Matcher m = PHASES.matcher(line);
            if (!m.matches()) {
                continue;
            }
            long at;
            try {
                at = java.time.Instant.parse(m.group(1)).toEpochMilli();
            } catch (java.time.format.DateTimeParseException notATime) {
                continue;
            }
            if (at < fromMs || at >= toMs) {
                continue;
            }
            batches++;
            for (String pair : m.group(2).split(",\\s*")) {
                String[] kv = pair.split("=");
                if (kv.length == 2 && kv[1].matches("\\d+")) {
                    byPhase.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(Long.parseLong(kv[1]));
                }
            }
        }
        if (batches == 0) {
            return "no batch logged in the window";
        }
        List<String> out = new ArrayList<>();
        byPhase.forEach((phase, values) -> {
            long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
            out.add(String.format("%s %.0f/%.0f", phase, RecordLatencies.percentile(sorted, 0.5), RecordLatencies.percentile(sorted, 0.99)));
        });
        return batches + " batches, ms p50/p99: " + String.join(", ", out);
    }

    /**
     * A contender's process while it runs: what its output says it wrote, and, once stopped, the
     * batches it acknowledged. Closing it stops the process.
     */
    abstract static class Running implements AutoCloseable {
        final String name;
        final Process process;
        final Path output;

        Running(String name, Process process, Path output) {
            this.name = name;
            this.process = process;
            this.output = output;
        }

        /** What a contender's start waits for. */
        @FunctionalInterface
        interface Readiness {
            void await() throws Exception;
        }

        /** This, once {@code ready} has passed; if it fails, the process is stopped and the failure thrown. */
        Running once(Readiness ready) throws Exception {
            try {
                ready.await();
                return this;
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        /** The process whose CPU is the contender's. */
        long pid() {
            return process.pid();
        }

        /** Rows written so far, by the contender's {@code lines} of output. */
        abstract long written(List<String> lines);

        /** The acknowledged batches, after {@link #stop}. */
        abstract List<AckedBatch> batches(List<String> lines) throws IOException;

        /** Where the batches acknowledged in {@code [fromMs, toMs)} spent their time, if the contender tells (the engine does). */
        String phases(long fromMs, long toMs) throws IOException {
            return null;
        }

        List<AckedBatch> batches() throws IOException {
            return batches(Files.readAllLines(output));
        }

        /** Waits until the contender has written {@code expected} rows, for at most {@link #DRAIN_SECONDS}. */
        void awaitWritten(long expected) throws Exception {
            long deadline = System.currentTimeMillis() + DRAIN_SECONDS * 1000L;
            while (true) {
                long written = written(Files.readAllLines(output));
                if (written >= expected) {
                    return;
                }
                checkAlive();
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(name + " had written " + written + " of " + expected + " rows " + DRAIN_SECONDS
                            + " s after the last record; its output: " + output);
                }
                Thread.sleep(200);
            }
        }

        /** Waits for a line of output that matches {@code line}, and returns it. */
        String awaitLine(Pattern line, int timeoutSeconds) throws Exception {
            long deadline = System.currentTimeMillis() + timeoutSeconds * 1000L;
            while (true) {
                for (String l : Files.readAllLines(output)) {
                    if (line.matcher(l).matches()) {
                        return l;
                    }
                }
                checkAlive();
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(name + " did not start in " + timeoutSeconds + " s; its output: " + output);
                }
                Thread.sleep(200);
            }
        }

        void checkAlive() throws IOException {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; its output, " + output + ", ends:\n"
                        + String.join("\n", WorkerProcessBenchmark.tail(Files.readAllLines(output), 40)));
            }
        }

        /** SIGTERM, then SIGKILL after a minute. */
        void stop() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                stop();
            }
        }
    }
}
