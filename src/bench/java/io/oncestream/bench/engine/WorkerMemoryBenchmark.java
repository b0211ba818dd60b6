package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.model.WorkerStatefulSets;

/**
 * What a worker needs in memory ({@code deploy/local/benchmark.sh --worker-memory}): the packaged
 * worker as a whole process, a continuous job with a worker pod's JVM options (the heap follows the
 * memory limit: {@code -XX:MaxRAMPercentage=75}, and below 640 MiB the {@code -Xmx} the operator
 * adds, the limit less 160 MiB), inside a memory cgroup whose
 * limit imitates a container's: the JVM reads it (container support) and the kernel OOM-kills the
 * worker above it. For each load (records/s produced to the job's topic while it runs, 0 for a
 * worker at rest, {@code max} for a backlog drained as fast as the worker can) it tries the limits
 * from the largest down and stops at the first that fails. A run passes when the worker is not
 * killed, spends at most 5 % of the measured wall time in GC pauses, keeps up, and leaves the table
 * exact (every record once, no other row). Each set of JVM options ({@code --worker-java-options
 * "|A|B"}, appended to the pod's defaults as {@code spec.worker.jvmOptions} is) runs at each load
 * and limit side by side.
 *
 * <p>Measured per run: the worker's peak resident set ({@code VmHWM}), the highest heap occupancy
 * after a GC and the committed heap (from {@code -Xlog:gc}), the time in GC pauses as a share of the
 * measured window, the memory cgroup's peak charge ({@code memory.max_usage_in_bytes} or {@code memory.peak}: what the limit
 * is held against, page cache included, which the kernel reclaims before it kills), and whether the kernel killed it ({@code memory.oom_control}'s {@code oom_kill},
 * or SIGKILL) or the JVM threw {@code OutOfMemoryError}. With {@code --nmt}, the JVM's native memory
 * by category ({@code jcmd VM.native_memory summary}) at the end of each window.
 */
final class WorkerMemoryBenchmark {

    private static final Pattern COMMIT = Pattern.compile(".*batch (\\d+) committed: .* written (\\d+),.*");
    /** A pause line of {@code -Xlog:gc:file=...:time}: {@code [time] GC(n) Pause Young (...) 20M->5M(61M) 3.456ms}. */
    private static final Pattern PAUSE = Pattern.compile(
            "^\\[([^]]+)\\] GC\\(\\d+\\) Pause (\\w+) .* (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\) ([\\d.]+)ms$");

    private final String bootstrap;
    private final String contactPoint;
    private final String datacenter;
    private final Path workerJava;
    private final Path work;
    private final List<String> javaOptionSets;
    private final int seconds;
    private final int warmupSeconds;
    private final int maxRecords;
    private final boolean nmt;
    /** The job's {@code maxRecordsPerBatch} ({@code --max-records-per-batch}, the default 50,000 unless set). */
    private final int maxRecordsPerBatch;
    /** Each record's value in bytes ({@code --record-bytes}), its note padded; 0: the orders as they are, about 190 bytes. */
    private final int recordBytes;
    private final String keyspace = "oncestream_mem_" + System.currentTimeMillis();
    private final List<String> topics = new ArrayList<>();
    private CqlSession session;
    private Path cgroupParent;

    WorkerMemoryBenchmark(String bootstrap, String contactPoint, String datacenter, Path workerJdk, List<String> javaOptionSets,
            int seconds, int warmupSeconds, int maxRecords, boolean nmt, int maxRecordsPerBatch, int recordBytes) throws Exception {
        this.maxRecordsPerBatch = maxRecordsPerBatch;
        this.recordBytes = recordBytes;
        this.bootstrap = bootstrap;
        this.contactPoint = contactPoint;
        this.datacenter = datacenter;
        this.workerJava = (workerJdk != null ? workerJdk : Path.of(System.getProperty("java.home"))).resolve("bin/java");
        this.javaOptionSets = javaOptionSets;
        this.seconds = seconds;
        this.warmupSeconds = warmupSeconds;
        this.maxRecords = maxRecords;
        this.nmt = nmt;
        this.work = Files.createTempDirectory("oncestream-memory");
    }

    /** One run's figures. */
    record Result(String load, int limitMiB, String options, double rssPeakMiB, double cgroupPeakMiB, double heapAfterGcMiB, double heapAfterFullGcMiB,
            double heapCommittedMiB,
            double gcPercent, int gcPauses, boolean oom, boolean exact, double recordsPerSecond, String note) {
        boolean passed() {
            return !oom && exact && gcPercent <= 5.0;
        }
    }

    /** Every load at every limit (largest first, stopping at a load's first failure), each set of options side by side. */
    void run(List<String> loads, List<Integer> limitsMiB) throws Exception {
        Path jar = Path.of("target/quarkus-app/quarkus-run.jar").toAbsolutePath();
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: build the worker first (mvn package -DskipTests)");
        }
        cgroupParent = memoryCgroupOfThisProcess();
        session = CassandraSessions.open(JobConfigs.parse(config("t", "x", 50_000)).sink(), null, null);
        session.execute("CREATE KEYSPACE " + keyspace + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        List<Result> results = new ArrayList<>();
        try {
            for (String load : loads) {
                boolean[] failed = new boolean[javaOptionSets.size()];
                for (int limit : limitsMiB.stream().sorted((a, b) -> b - a).toList()) {
                    for (int set = 0; set < javaOptionSets.size(); set++) {
                        if (failed[set]) {
                            continue;
                        }
                        Result r = run(jar, load, limit, javaOptionSets.get(set).trim(), results.size());
                        results.add(r);
                        log("%s", line(r));
                        failed[set] = !r.passed();
                    }
                    if (allTrue(failed)) {
                        break;
                    }
                }
            }
        } finally {
            session.execute(SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + keyspace).setTimeout(java.time.Duration.ofSeconds(60)));
            session.close();
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
            }
        }
        System.out.println();
        System.out.printf("RESULTS (packaged worker, a continuous job, on %s; JAVA_TOOL_OPTIONS: %s, then -Xmx as the operator sets it"
                + " for the limit (below 640 MiB, unless the set's options size the heap), then the set's options;"
                + " JDK_JAVA_OPTIONS: %s; the memory limit is a memory cgroup's; %d s measured after %d s of warm-up;"
                + " a run passes with no OOM kill, GC pauses <= 5 %% of the window, and the table exact; maxRecordsPerBatch %,d%s)%n",
                workerJava.getParent().getParent(), WorkerStatefulSets.DEFAULT_JVM_OPTIONS,
                java.util.Objects.requireNonNullElse(WorkerProcessBenchmark.imageJdkJavaOptions(workerJava), "none"), seconds, warmupSeconds, maxRecordsPerBatch,
                recordBytes > 0 ? String.format("; values of %,d bytes", recordBytes) : "");
        System.out.println("| load (records/s) | limit | JVM options added | RSS peak | cgroup peak | heap after GC (max) | after a full GC | heap committed | GC % |"
                + " OOM | table exact | rate kept | passes |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Result r : results) {
            System.out.printf("| %s | %d MiB | %s | %.0f MiB | %.0f MiB | %.1f MiB | %s | %.0f MiB | %s (%d pauses) | %s | %s | %,.0f | %s |%n",
                    r.load(), r.limitMiB(), r.options().isEmpty() ? "(none)" : "`" + r.options() + "`", r.rssPeakMiB(), r.cgroupPeakMiB(),
                    r.heapAfterGcMiB(), fullGc(r.heapAfterFullGcMiB()), r.heapCommittedMiB(), percent(r.gcPercent()), r.gcPauses(), r.oom() ? "yes" : "no", r.exact() ? "yes" : "no",
                    r.recordsPerSecond(), r.passed() ? "yes" : "no" + (r.note().isEmpty() ? "" : ": " + r.note()));
        }
        System.out.println("Smallest limit that passed, per load and set of options:");
        for (String load : loads) {
            for (String options : javaOptionSets) {
                int smallest = results.stream().filter(r -> r.load().equals(load) && r.options().equals(options.trim()) && r.passed())
                        .mapToInt(Result::limitMiB).min().orElse(-1);
                System.out.printf("  %s records/s, options [%s]: %s%n", load, options.trim(),
                        smallest < 0 ? "none of the limits tried" : smallest + " MiB");
            }
        }
    }

    /** The GC share of a window, or "n/a" when the run ended before its window did. */
    private static String percent(double gcPercent) {
        return Double.isNaN(gcPercent) ? "n/a" : String.format("%.2f %%", gcPercent);
    }

    private static String fullGc(double mib) {
        return mib < 0 ? "none" : String.format("%.1f MiB", mib);
    }

    private static boolean allTrue(boolean[] flags) {
        for (boolean f : flags) {
            if (!f) {
                return false;
            }
        }
        return true;
    }

    private static String line(Result r) {
        return String.format("load %s, limit %d MiB, options [%s]: RSS peak %.0f MiB, cgroup peak %.0f MiB, heap after GC %.1f MiB"
                + " (after a full GC %s, committed %.0f MiB), GC %s (%d pauses), OOM %s, table exact %s, %,.0f records/s%s", r.load(), r.limitMiB(),
                r.options(), r.rssPeakMiB(), r.cgroupPeakMiB(), r.heapAfterGcMiB(), fullGc(r.heapAfterFullGcMiB()), r.heapCommittedMiB(), percent(r.gcPercent()), r.gcPauses(), r.oom() ? "yes" : "no",
                r.exact() ? "yes" : "no", r.recordsPerSecond(), r.note().isEmpty() ? "" : " (" + r.note() + ")");
    }

    /** This JVM's memory cgroup (v1 {@code memory} controller, or the v2 unified hierarchy), under which each run gets a child. */
    private static Path memoryCgroupOfThisProcess() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
            String[] f = line.split(":", 3);
            if (f[1].equals("memory") && Files.isDirectory(Path.of("/sys/fs/cgroup/memory"))) {
                return Path.of("/sys/fs/cgroup/memory" + f[2]);
            }
        }
        for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
            String[] f = line.split(":", 3);
            if (f[0].equals("0") && Files.exists(Path.of("/sys/fs/cgroup" + f[2], "cgroup.controllers"))
                    && Files.readString(Path.of("/sys/fs/cgroup" + f[2], "cgroup.controllers")).contains("memory")) {
                return Path.of("/sys/fs/cgroup" + f[2]);
            }
        }
        throw new IllegalStateException("no memory cgroup controller to limit the worker with (/proc/self/cgroup)");
    }

    String config(String topic, String table, int maxRecords) {
        return """
                {"jobId": "bench/%s", "source": {"bootstrapServers": "%s", "topics": ["%s"], "maxRecordsPerBatch": %d},
                 "filter": "%s",
                 "sink": {"contactPoints": ["%s"], "localDatacenter": "%s", "keyspace": "%s", "table": "%s", "consistency": "ONE",
                          "columns": %s},
                 "trigger": {"intervalMs": 1000, "availableNow": false}}
                """.formatted(table, bootstrap, topic, maxRecords, BenchOrders.FILTER, contactPoint, datacenter, keyspace, table,
                BenchOrders.COLUMNS);
    }

    private Result run(Path jar, String load, int limitMiB, String options, int index) throws Exception {
        String name = "mem_" + index + "_" + load + "_" + limitMiB;
        String topic = "bench-memory-" + System.currentTimeMillis() + "-" + index;
        topics.add(topic);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 3, (short) 1))).all().get();
        }
        session.execute("CREATE TABLE " + keyspace + "." + name + " (order_id text PRIMARY KEY, customer text, amount double, seq bigint)");
        Path dir = Files.createDirectories(work.resolve(name));
        Path cgroup = cgroupParent.resolve("oncestream-memory-bench-" + ProcessHandle.current().pid() + "-" + index);
        Files.createDirectory(cgroup);
        boolean v1 = Files.exists(cgroup.resolve("memory.limit_in_bytes"));
        long limitBytes = (long) limitMiB << 20;
        Files.writeString(cgroup.resolve(v1 ? "memory.limit_in_bytes" : "memory.max"), String.valueOf(limitBytes));
        if (v1 && Files.exists(cgroup.resolve("memory.memsw.limit_in_bytes"))) {
            Files.writeString(cgroup.resolve("memory.memsw.limit_in_bytes"), String.valueOf(limitBytes)); // no swapping either
        } else if (!v1 && Files.exists(cgroup.resolve("memory.swap.max"))) {
            Files.writeString(cgroup.resolve("memory.swap.max"), "0");
        }
        BenchProducer producer = new BenchProducer(topic);
        boolean max = load.equals("max");
        if (max) {
            log("%s: producing a backlog of %,d records", name, maxRecords);
            producer.produce(maxRecords);
        }
        Path output = dir.resolve("worker.log");
        Path gcLog = dir.resolve("gc.log");
        List<String> command = new ArrayList<>(List.of("sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", cgroup.resolve("cgroup.procs").toString(),
                workerJava.toString()));
        command.add("-Xlog:gc:file=" + gcLog + ":time");
        if (nmt) {
            command.add("-XX:NativeMemoryTracking=summary");
        }
        command.addAll(List.of("-jar", jar.toString(), "worker", "--config",
                Files.writeString(dir.resolve("job.json"), config(topic, name, maxRecordsPerBatch)).toString(), "--checkpoint",
                dir.resolve("checkpoint").toString(), "--worker-index", "0", "--http-host", "127.0.0.1", "--http-port", "0"));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        // As the operator renders them for a container of this limit: with -Xmx below 640 MiB, unless the options size the heap.
        builder.environment().put("JAVA_TOOL_OPTIONS", WorkerStatefulSets.javaToolOptions(WorkerStatefulSets.DEFAULT_JVM_OPTIONS,
                (long) limitMiB << 20, options.isBlank() ? null : options.trim()));
        String imageOptions = WorkerProcessBenchmark.imageJdkJavaOptions(workerJava);
        if (imageOptions != null) {
            builder.environment().put("JDK_JAVA_OPTIONS", imageOptions);
        } else {
            builder.environment().remove("JDK_JAVA_OPTIONS");
        }
        log("%s: the worker in a memory cgroup of %d MiB, options [%s], load %s", name, limitMiB, options, load);
        Process worker = builder.start();
        long pid = worker.pid();
        Sampler sampler = new Sampler(pid);
        sampler.start();
        String note = "";
        long windowStart;
        long windowEnd;
        long expected;
        try {
            if (max) {
                windowStart = System.currentTimeMillis();
                expected = maxRecords;
                awaitWritten(output, expected, worker, 600);
                windowEnd = System.currentTimeMillis();
            } else {
                int rate = Integer.parseInt(load);
                // the worker starts and connects first: its start is not part of the measured window
                awaitLine(output, "serving http", worker, 60);
                long produceUntil = System.currentTimeMillis() + (warmupSeconds + seconds) * 1000L;
                windowStart = System.currentTimeMillis() + warmupSeconds * 1000L;
                producer.produceAt(rate, produceUntil, worker);
                windowEnd = System.currentTimeMillis();
                expected = producer.sent;
                awaitWritten(output, expected, worker, 60);
            }
        } catch (IllegalStateException e) {
            note = e.getMessage();
            windowStart = 0;
            windowEnd = System.currentTimeMillis();
            expected = producer.sent;
        }
        if (nmt && worker.isAlive()) {
            Path summary = dir.resolve("nmt.txt");
            new ProcessBuilder(workerJava.resolveSibling("jcmd").toString(), String.valueOf(pid), "VM.native_memory", "summary")
                    .redirectErrorStream(true).redirectOutput(summary.toFile()).start().waitFor(60, TimeUnit.SECONDS);
            log("%s: native memory (jcmd VM.native_memory summary, committed):%n%s", name, nmtCommitted(summary));
        }
        if (worker.isAlive()) {
            // the heap in use now, as the JVM reports it
            Path heap = dir.resolve("heap-info.txt");
            new ProcessBuilder(workerJava.resolveSibling("jcmd").toString(), String.valueOf(pid), "GC.heap_info")
                    .redirectErrorStream(true).redirectOutput(heap.toFile()).start().waitFor(60, TimeUnit.SECONDS);
        }
        double hwm = sampler.stopAndPeakMiB();
        worker.destroy();
        if (!worker.waitFor(30, TimeUnit.SECONDS)) {
            worker.destroyForcibly().waitFor();
        }
        int exit = worker.exitValue();
        producer.close();
        // what the limit is held against: the cgroup's peak charge (resident memory, and page cache the kernel reclaims first)
        double cgroupPeak = Long.parseLong(Files.readString(cgroup.resolve(v1 ? "memory.max_usage_in_bytes" : "memory.peak")).trim())
                / 1048576.0;
        String oomControl = Files.readString(cgroup.resolve(v1 ? "memory.oom_control" : "memory.events"));
        Matcher kills = Pattern.compile("(?m)^oom_kill (\\d+)").matcher(oomControl);
        boolean oomKilled = (kills.find() && Long.parseLong(kills.group(1)) > 0) || exit == 137;
        boolean javaOom = Files.readString(output).contains("OutOfMemoryError");
        if (javaOom) {
            note = (note.isEmpty() ? "" : note + "; ") + "java.lang.OutOfMemoryError in the log";
        }
        Files.delete(cgroup); // empty now that the worker has exited
        double[] gc = gc(gcLog, windowStart, windowEnd);
        boolean exact = note.isEmpty() && tableExact(name, expected);
        double windowSeconds = (windowEnd - windowStart) / 1000.0;
        double rate = max ? expected / windowSeconds : expected / (double) (warmupSeconds + seconds);
        session.execute("DROP TABLE " + keyspace + "." + name);
        return new Result(load, limitMiB, options, hwm, cgroupPeak, gc[1], gc[4], gc[2], windowStart == 0 ? Double.NaN : 100 * gc[0] / (windowEnd - windowStart),
                (int) gc[3], oomKilled || javaOom, exact, rate, note);
    }

    /**
     * {ms of pauses in the window, highest heap after any GC, highest committed heap (MiB), pauses in the window, highest heap
     * after a full GC (the live set; -1 without one)}. After a young GC the heap also holds what was promoted and died since.
     */
    private static double[] gc(Path gcLog, long from, long to) throws Exception {
        double pauses = 0;
        double after = 0;
        double afterFull = -1;
        double committed = 0;
        int count = 0;
        if (!Files.exists(gcLog)) {
            return new double[] {0, 0, 0, 0, -1};
        }
        for (String line : Files.readAllLines(gcLog)) {
            Matcher m = PAUSE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            long at = OffsetDateTime.parse(m.group(1), DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ")).toInstant().toEpochMilli();
            if (m.group(2).equals("Full")) {
                afterFull = Math.max(afterFull, mib(m.group(5), m.group(6)));
            }
            after = Math.max(after, mib(m.group(5), m.group(6)));
            committed = Math.max(committed, mib(m.group(7), m.group(8)));
            if (at >= from && at <= to) {
                pauses += Double.parseDouble(m.group(9));
                count++;
            }
        }
        return new double[] {pauses, after, committed, count, afterFull};
    }

    private static double mib(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "K" -> v / 1024;
            case "G" -> v * 1024;
            default -> v;
        };
    }

    private static String nmtCommitted(Path summary) throws Exception {
        StringBuilder out = new StringBuilder();
        Pattern category = Pattern.compile("^-\\s+(.+?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)");
        Pattern total = Pattern.compile("^Total: reserved=\\d+KB, committed=(\\d+)KB.*");
        for (String line : Files.readAllLines(summary)) {
            Matcher t = total.matcher(line.trim());
            if (t.matches()) {
                out.append(String.format("    total %.1f MiB%n", Long.parseLong(t.group(1)) / 1024.0));
            }
            Matcher m = category.matcher(line.trim());
            if (m.find() && Long.parseLong(m.group(2)) >= 1024) {
                out.append(String.format("    %-28s %.1f MiB%n", m.group(1), Long.parseLong(m.group(2)) / 1024.0));
            }
        }
        return out.toString().stripTrailing();
    }

    /** Every produced record once, with its own sequence number, and no other row. */
    private boolean tableExact(String table, long expected) {
        BitSet seen = new BitSet((int) expected);
        long rows = 0;
        for (Row row : session.execute(SimpleStatement.newInstance("SELECT order_id, seq FROM " + keyspace + "." + table)
                .setPageSize(5000).setTimeout(java.time.Duration.ofSeconds(30)))) {
            long seq = row.getLong("seq");
            if (seq < 0 || seq >= expected || seen.get((int) seq) || !row.getString("order_id").equals("ord-" + seq)) {
                return false;
            }
            seen.set((int) seq);
            rows++;
        }
        return rows == expected;
    }

    /** Waits until the worker's log says it has written {@code expected} rows in all. */
    private static void awaitWritten(Path output, long expected, Process worker, int timeoutSeconds) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutSeconds * 1000L;
        while (true) {
            long written = 0;
            for (String line : Files.readAllLines(output)) {
                Matcher m = COMMIT.matcher(line);
                if (m.matches()) {
                    written += Long.parseLong(m.group(2));
                }
            }
            if (written >= expected) {
                return;
            }
            if (!worker.isAlive()) {
                throw new IllegalStateException("the worker exited (" + worker.exitValue() + ") after writing " + written + " of " + expected);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the worker had written " + written + " of " + expected + " rows " + timeoutSeconds
                        + " s after the last record");
            }
            Thread.sleep(200);
        }
    }

    private static void awaitLine(Path output, String text, Process worker, int timeoutSeconds) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutSeconds * 1000L;
        while (!Files.readString(output).contains(text)) {
            if (!worker.isAlive() || System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the worker did not start (" + (worker.isAlive() ? "timeout" : "exit " + worker.exitValue()) + ")");
            }
            Thread.sleep(100);
        }
    }

    /** Samples the worker's resident set while it runs; its peak from the kernel's own high-water mark (VmHWM). */
    private static final class Sampler extends Thread {
        private final Path status;
        private volatile boolean running = true;
        private volatile double peakKb;

        Sampler(long pid) {
            this.status = Path.of("/proc/" + pid + "/status");
            setDaemon(true);
        }

        @Override
        public void run() {
            while (running) {
                try {
                    for (String line : Files.readAllLines(status)) {
                        if (line.startsWith("VmHWM:")) {
                            peakKb = Math.max(peakKb, Double.parseDouble(line.replaceAll("[^0-9]", "")));
                        }
                    }
                    Thread.sleep(250);
                } catch (Exception e) {
                    return; // the process is gone
                }
            }
        }

        double stopAndPeakMiB() throws InterruptedException {
            running = false;
            join(1000);
            return peakKb / 1024;
        }
    }

    /** The benchmark's orders to one topic, record i with sequence number i, all passing the filter. */
    private final class BenchProducer implements AutoCloseable {
        private final String topic;
        private final KafkaProducer<String, String> producer;
        private final Random random = new Random(1);
        long sent;

        BenchProducer(String topic) {
            this.topic = topic;
            java.util.Properties p = new java.util.Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
            p.put("value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
            p.put("enable.idempotence", "true");
            p.put("acks", "all");
            p.put("max.in.flight.requests.per.connection", "1"); // KAFKA-15591
            p.put("compression.type", "lz4");
            p.put("linger.ms", "5");
            producer = new KafkaProducer<>(p);
        }

        void produce(int count) {
            for (int i = 0; i < count; i++) {
                send();
            }
            producer.flush();
        }

        /** {@code rate} records per second in steps of 10 ms until {@code until}, or until the worker exits. */
        void produceAt(int rate, long until, Process worker) throws InterruptedException {
            long start = System.currentTimeMillis();
            while (System.currentTimeMillis() < until && worker.isAlive()) {
                long due = (System.currentTimeMillis() - start) * rate / 1000;
                while (sent < due) {
                    send();
                }
                Thread.sleep(10);
            }
            producer.flush();
            if (!worker.isAlive()) {
                throw new IllegalStateException("the worker exited (" + worker.exitValue() + ") in the measured window");
            }
        }

        private void send() {
            String v = BenchOrders.json(random, sent++);
            if (recordBytes > v.length()) { // the note, the last field, padded
                v = v.substring(0, v.length() - 2) + "x".repeat(recordBytes - v.length()) + "\"}";
            }
            producer.send(new ProducerRecord<>(topic, BenchOrders.parse(v)[0], v));
        }

        @Override
        public void close() {
            producer.close();
        }
    }
}
