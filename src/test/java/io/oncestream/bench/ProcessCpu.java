package io.oncestream.bench;

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
 * The CPU each of some processes used over a window, and the machine's idle time, from Linux's
 * {@code /proc/<pid>/stat} and {@code /proc/stat}: which of the processes sharing the machine
 * (the Cassandra node, Kafka, the benchmark itself) takes the CPUs at a given rate.
 */
final class ProcessCpu {

    /** Clock ticks per second in /proc stat files: 100 on Linux (USER_HZ). */
    private static final double TICKS_PER_SECOND = 100;

    private final Map<String, Long> pids;
    private final Map<String, Long> startTicks = new LinkedHashMap<>();
    private long startIdle;
    private long startNanos;

    /** {@code pids}: name to process id, in the order they are printed. */
    ProcessCpu(Map<String, Long> pids) {
        this.pids = pids;
    }

    /** Whether this machine has {@code /proc/stat}. */
    static boolean available() {
        return Files.isReadable(Path.of("/proc/stat"));
    }

    private final Map<String, Long> startThreads = new HashMap<>();

    /** Starts the window. */
    void start() {
        pids.forEach((name, pid) -> startTicks.put(name, ticks(pid)));
        startThreads.putAll(threadTicks());
        startIdle = idleTicks();
        startNanos = System.nanoTime();
    }

    /**
     * This JVM's CPUs over the window by kind of thread, named by {@code kindOf} from a thread's
     * name as Linux keeps it (15 characters): threads started within the window count whole.
     */
    String threads(Function<String, String> kindOf) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        Map<String, Double> byKind = new TreeMap<>();
        threadTicks().forEach((task, ticks) -> {
            String name = task.substring(task.indexOf(' ') + 1);
            long before = startThreads.getOrDefault(task, 0L);
            byKind.merge(kindOf.apply(name), (ticks - before) / TICKS_PER_SECOND / seconds, Double::sum);
        });
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
                    int close = stat.lastIndexOf(')');
                    String[] fields = stat.substring(close + 2).split(" ");
                    out.put(task.getFileName() + " " + stat.substring(stat.indexOf('(') + 1, close),
                            Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
                } catch (IOException | RuntimeException e) {
                    // the thread ended between listing and reading
                }
            }
        } catch (IOException e) {
            // no /proc: nothing to tell
        }
        return out;
    }

    /** Each process's CPUs over the window since {@link #start()} (1.0: one CPU all the time), and the idle CPUs. */
    String summary() {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        StringBuilder out = new StringBuilder();
        pids.forEach((name, pid) -> out.append(out.length() == 0 ? "" : ", ").append(String.format("%s %.2f", name,
                (ticks(pid) - startTicks.get(name)) / TICKS_PER_SECOND / seconds)));
        out.append(String.format(", idle %.2f (of %d CPUs, over %.1f s)", (idleTicks() - startIdle) / TICKS_PER_SECOND / seconds,
                Runtime.getRuntime().availableProcessors(), seconds));
        return out.toString();
    }

    /** utime + stime of a process, all its threads; -1 when it cannot be read. */
    private static long ticks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
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
