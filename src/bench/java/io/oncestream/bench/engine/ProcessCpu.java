package io.oncestream.bench.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The CPU each of some processes used over a window, this JVM's by kind of thread, and the
 * machine's idle time, from Linux's {@code /proc/<pid>/stat}, {@code /proc/self/task/<tid>/stat}
 * and {@code /proc/stat}: which of the processes sharing the machine (the Cassandra node, Kafka,
 * the benchmark itself) takes the CPUs at a given rate.
 */
final class ProcessCpu {

    /** Clock ticks per second of utime and stime in /proc stat files: 100 on Linux (USER_HZ). */
    static final double TICKS_PER_SECOND = 100;

    private final Map<String, Long> pids;
    private final Map<String, Long> startTicks = new LinkedHashMap<>();
    private final Map<String, Long> startThreads = new HashMap<>();
    private final Map<String, Long> endTicks = new LinkedHashMap<>();
    private final Map<String, Long> endThreads = new HashMap<>();
    private long startIdle;
    private long endIdle;
    private long startNanos;
    private long endNanos;

    /** {@code pids}: name to process id, in the order they are printed. */
    ProcessCpu(Map<String, Long> pids) {
        this.pids = pids;
    }

    /** Whether this machine has {@code /proc/stat}. */
    static boolean available() {
        return Files.isReadable(Path.of("/proc/stat"));
    }

    /**
     * utime + stime from the content of a {@code stat} file: "pid (name) state ppid ...", where
     * the name may hold spaces and parentheses; they are the 12th and 13th fields after it.
     */
    static long ticks(String stat) {
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** The name in the content of a {@code stat} file, as Linux keeps it (15 characters). */
    static String name(String stat) {
        return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    }

    /** Opens the window. */
    void start() {
        pids.forEach((name, pid) -> startTicks.put(name, processTicks(pid)));
        startThreads.putAll(threadTicks());
        startIdle = idleTicks();
        startNanos = System.nanoTime();
    }

    /** Ends the window (while the threads to count still run); {@link #summary} and {@link #threads} tell of it. */
    void stop() {
        pids.forEach((name, pid) -> endTicks.put(name, processTicks(pid)));
        endThreads.putAll(threadTicks());
        endIdle = idleTicks();
        endNanos = System.nanoTime();
    }

    /** Each process's CPUs over the window (1.0: one CPU all the time), and the idle CPUs. */
    String summary() {
        double seconds = (endNanos - startNanos) / 1e9;
        StringBuilder out = new StringBuilder();
        pids.forEach((name, pid) -> {
            long before = startTicks.get(name);
            long now = endTicks.get(name);
            out.append(out.length() == 0 ? "" : ", ").append(before < 0 || now < 0 ? name + " not readable (pid " + pid + ")"
                    : String.format("%s %.2f", name, (now - before) / TICKS_PER_SECOND / seconds));
        });
        out.append(String.format(", idle %.2f (of %d CPUs, over %.1f s)", (endIdle - startIdle) / TICKS_PER_SECOND / seconds,
                Runtime.getRuntime().availableProcessors(), seconds));
        return out.toString();
    }

    /** The CPU seconds (user + system, all threads) process {@code name} used over the window; NaN when it could not be read. */
    double seconds(String name) {
        long before = startTicks.getOrDefault(name, -1L);
        long now = endTicks.getOrDefault(name, -1L);
        return before < 0 || now < 0 ? Double.NaN : (now - before) / TICKS_PER_SECOND;
    }

    /**
     * This JVM's CPUs over the window by kind of thread, named by {@code kindOf} from a thread's
     * name as Linux keeps it: threads started within the window count whole, threads that
     * ended within it not at all.
     */
    String threads(Function<String, String> kindOf) {
        double seconds = (endNanos - startNanos) / 1e9;
        Map<String, Double> byKind = new TreeMap<>();
        endThreads.forEach((task, ticks) -> byKind.merge(kindOf.apply(task.substring(task.indexOf(' ') + 1)),
                (ticks - startThreads.getOrDefault(task, 0L)) / TICKS_PER_SECOND / seconds, Double::sum));
        StringBuilder out = new StringBuilder();
        byKind.forEach((kind, cpus) -> out.append(out.length() == 0 ? "" : ", ").append(String.format("%s %.2f", kind, cpus)));
        return out.toString();
    }

    /** utime + stime of each thread of this JVM, keyed by {@code "tid name"}. */
    private static Map<String, Long> threadTicks() {
        Map<String, Long> out = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    out.put(task.getFileName() + " " + name(stat), ticks(stat));
                } catch (IOException | RuntimeException e) {
                    // the thread ended between listing and reading
                }
            }
        } catch (IOException e) {
            // no /proc: nothing to tell
        }
        return out;
    }

    /** utime + stime of a process, all its threads; -1 when it cannot be read (it ended, or never ran). */
    private static long processTicks(long pid) {
        try {
            return ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Idle and I/O-wait ticks of all CPUs. */
    private static long idleTicks() {
        try {
            String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            return Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
