package io.oncestream.bench.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where a child JVM's CPU time goes, by kind of thread (the JIT compilers, the collector, the
 * main thread, the Cassandra driver, Kafka's client, the rest), read from Linux's
 * {@code /proc/<pid>/task/<tid>/stat} every 100 ms while it runs. Each thread counts with its
 * last reading, so the last 100 ms of a thread and threads shorter than that are missed: a
 * breakdown of the process's CPU, not its total (which {@code times} gives exactly).
 */
final class ThreadCpu implements AutoCloseable {

    /** The kinds, in the order they are printed. */
    static final List<String> KINDS = List.of("JIT compilers", "main thread", "Cassandra driver", "GC and VM threads", "Kafka client",
            "other");
    private static final Pattern DRIVER = Pattern.compile("s\\d+-.*");
    private static final Path PROC = Path.of("/proc");
    private static final double TICKS_PER_SECOND = ProcessCpu.TICKS_PER_SECOND;

    private final ProcessHandle parent;
    private final Map<String, Reading> threads = new HashMap<>(); // by thread id
    private final Thread sampler;
    private volatile boolean open = true;
    private long pid = -1;

    /** Samples the first Java process among {@code process} and its children (a shell that runs {@code java}, say). */
    ThreadCpu(Process process) {
        this.parent = process.toHandle();
        this.sampler = new Thread(this::run, "thread-cpu");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Whether this machine has {@code /proc} to read threads from. */
    static boolean available() {
        return Files.isDirectory(PROC.resolve("self").resolve("task"));
    }

    private void run() {
        while (open) {
            sample();
            try {
                Thread.sleep(100); // the sampling interval
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void sample() {
        if (pid < 0) {
            Optional<ProcessHandle> java = Stream.concat(Stream.of(parent), parent.children())
                    .filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false)).findFirst();
            if (java.isEmpty()) {
                return;
            }
            pid = java.get().pid();
        }
        try (Stream<Path> tasks = Files.list(PROC.resolve(Long.toString(pid)).resolve("task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    threads.put(task.getFileName().toString(), new Reading(ProcessCpu.name(stat), ProcessCpu.ticks(stat)));
                } catch (IOException | RuntimeException e) {
                    // the thread ended between listing and reading: its last reading stands
                }
            }
        } catch (IOException e) {
            // the process ended: the last readings stand
        }
    }

    /** The kind of a thread from its name as Linux keeps it (the first 15 characters). */
    static String kind(String name) {
        if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
            return "JIT compilers";
        }
        if (name.equals("java")) { // the launcher's main thread keeps the process's name
            return "main thread";
        }
        if (DRIVER.matcher(name).matches()) {
            return "Cassandra driver";
        }
        if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread")) {
            return "GC and VM threads";
        }
        if (name.startsWith("kafka-")) {
            return "Kafka client";
        }
        return "other";
    }

    /** CPU seconds by kind, in the order of {@link #KINDS}, after the process ended. */
    synchronized double[] secondsByKind() {
        double[] out = new double[KINDS.size()];
        for (Reading t : threads.values()) {
            out[KINDS.indexOf(kind(t.name()))] += t.ticks() / TICKS_PER_SECOND;
        }
        return out;
    }

    /** A thread's last reading: its name and its user + system clock ticks. */
    private record Reading(String name, long ticks) {
    }

    @Override
    public void close() throws InterruptedException {
        open = false;
        sampler.interrupt();
        sampler.join();
    }
}
