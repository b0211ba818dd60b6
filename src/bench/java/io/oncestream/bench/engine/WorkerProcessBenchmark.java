package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.fmt;
import static io.oncestream.bench.engine.Figures.log;
import static io.oncestream.bench.engine.Figures.median;
import static io.oncestream.bench.engine.Figures.medianOf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The packaged worker as a whole process, as a worker pod runs it, side by side in each round:
 * this build with each set of JVM options, an earlier build ({@code --baseline}), the worker on
 * a JDK 25 with and without AOT caches ({@code --aot-java}), and Spark ({@link SparkComparison},
 * {@code --spark}). Each table is read back and checked ({@code --worker-process N}).
 */
final class WorkerProcessBenchmark {

    private final BenchSetup setup;
    /** The fraction of produced records that pass the filter ({@code --passing}). */
    private final double passing;
    /**
     * Sets of JVM options for the packaged worker, each run with each set in turn
     * ({@code --worker-java-options "-XX:A|-XX:B"}, {@code |} between sets).
     */
    private final List<String> workerJavaOptions;
    /**
     * Another build of the worker ({@code --baseline DIR}: a copy of an earlier {@code target/quarkus-app}),
     * run in each round with the first set of JVM options, or null: a code change measured side by side.
     */
    private final Path baseline;
    /**
     * A JDK of version 25 or later ({@code --aot-java JAVA_HOME}), or null: the worker also runs on it, without
     * and with an AOT cache (JEP 483, 515) made by a training run, each with the first set of JVM options.
     */
    private final Path aotJava;
    /** The JDK the worker runs on ({@code --worker-jdk JAVA_HOME}: the images' runtime, from benchmark.sh), or null: this benchmark's. */
    private final Path workerJdk;
    /** The Spark comparison ({@code --spark-classpath}, set by {@code benchmark.sh --spark}), or null for none. */
    private final SparkComparison spark;
    /** The records on the benchmark's topic, once {@link #run} has produced them. */
    private BenchSetup.Produced produced;

    WorkerProcessBenchmark(BenchSetup setup, double passing, List<String> workerJavaOptions, Path baseline, Path aotJava,
            Path workerJdk, SparkComparison spark) {
        this.setup = setup;
        this.passing = passing;
        this.workerJavaOptions = workerJavaOptions;
        this.baseline = baseline;
        this.aotJava = aotJava;
        this.workerJdk = workerJdk;
        this.spark = spark;
    }

    /**
     * The packaged worker as a worker pod runs it ({@code java -jar quarkus-run.jar worker}, the pod's
     * {@code JAVA_TOOL_OPTIONS}, a 512 MB heap), as a
     * whole process, {@code availableNow} over the benchmark's records into the wide table:
     * the fixed costs around the batches (process start to its first batch's start, its last
     * commit to the process's exit), rows/s from process start to exit, and the worker JVM's CPU
     * time (user + system) per million input records, medians of {@code runs}.
     */
    void run(int runs) throws Exception {
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
        produced = setup.freshKeyspaceAndTopic(topic, passing);
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
            Path started = setup.work.resolve("aot-start.aot");
            Path whole = setup.work.resolve("aot-whole.aot");
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
        List<double[]> sparkRuns = new ArrayList<>(); // per run: {whole, rows/s, CPU-s/M}
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
            if (spark != null) { // in the same round, on the same topic and Cassandra
                double[] s = spark.run(topic, "wide_spark_" + run, produced);
                sparkRuns.add(s);
                double[] w = results.get(0).get(run - 1);
                log("run %d, Spark Structured Streaming: whole process %.0f ms (%,.0f rows/s), %.1f CPU-s per million input records;"
                        + " worker %s / Spark: rows/s %.2f, CPU per record %.2f", run, s[0], s[1], s[2],
                        variants.get(0).label(), w[3] / s[1], w[4] / s[2]);
            }
        }
        System.out.println();
        System.out.printf("RESULTS (packaged worker, availableNow, %,d records of which %,d pass the filter, into the wide table,"
                + " median of %d runs after one not measured; on %s; JAVA_TOOL_OPTIONS as in an availableNow job's worker pod: %s;"
                + " JDK_JAVA_OPTIONS as in the image: %s)%n", setup.records, produced.passingRecords(),
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
        if (spark != null) {
            System.out.printf("  Spark Structured Streaming %s, local[%d], %s records per micro-batch, -Xmx%s,"
                    + " rows batched by %s%n", spark.version(), SparkComparison.SPARK_THREADS,
                    spark.sparkBatch == 0 ? "all" : String.format("%,d", spark.sparkBatch),
                    SparkComparison.SPARK_HEAP, spark.sparkGrouping.equals("partition") ? "partition (the connector's default)"
                            : "replica set, up to " + spark.sparkBatchRows() + " rows");
            System.out.printf("    whole process                      : %.0f ms (%,.0f rows/s)%n", medianOf(sparkRuns, 0), medianOf(sparkRuns, 1));
            System.out.printf("    Spark JVM CPU per million records  : %.1f CPU-s%n", medianOf(sparkRuns, 2));
            for (int set = 0; set < variants.size(); set++) {
                double[] rate = perRun(results.get(set), 3, sparkRuns, 1);
                double[] cpu = perRun(results.get(set), 4, sparkRuns, 2);
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

    static List<String> tail(List<String> lines, int n) {
        return lines.subList(Math.max(0, lines.size() - n), lines.size());
    }

    /**
     * One run of the packaged worker into a new table: {start to first batch, last commit to exit,
     * whole, rows/s, CPU-s/M, then CPU-s/M per kind of thread as {@link ThreadCpu#KINDS} (0 without /proc)}.
     */
    private double[] workerRun(WorkerVariant variant, String topic, String table) throws Exception {
        setup.createTable(table);
        Path dir = Files.createDirectories(setup.work.resolve(table));
        Path output = dir.resolve("worker.log");
        Path times = dir.resolve("cpu-times.txt");
        ProcessBuilder command = workerCommand(variant.java(), variant.jar(), variant.options(),
                Files.writeString(dir.resolve("job.json"), setup.config(topic, table, 50_000, true)), dir, output, times);
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
        if (written != produced.passingRecords()) {
            throw new IllegalStateException("the worker wrote " + written + " rows, expected " + produced.passingRecords());
        }
        setup.checkWideTable(table, produced);
        double[] out = Arrays.copyOf(new double[] {firstStart - started, ended - lastCommit, ended - started,
            written / ((ended - started) / 1000.0), childCpuSeconds(times) / setup.records * 1e6}, 5 + byKind.length);
        for (int k = 0; k < byKind.length; k++) {
            out[5 + k] = byKind[k] / setup.records * 1e6;
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
        setup.createTable(table);
        Path dir = Files.createDirectories(setup.work.resolve(table));
        String job = setup.config(topic, table, 50_000, true);
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
    static ProcessBuilder timedJava(Path java, List<String> javaArguments, Path output, Path times) {
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
    static double childCpuSeconds(Path times) throws java.io.IOException {
        List<String> lines = Files.readAllLines(times);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)m([\\d.]+)s\\s+(\\d+)m([\\d.]+)s").matcher(lines.get(1));
        if (!m.matches()) {
            throw new IllegalStateException("unexpected output of times in " + times + ": " + lines);
        }
        return Integer.parseInt(m.group(1)) * 60 + Double.parseDouble(m.group(2)) + Integer.parseInt(m.group(3)) * 60
                + Double.parseDouble(m.group(4));
    }
}
