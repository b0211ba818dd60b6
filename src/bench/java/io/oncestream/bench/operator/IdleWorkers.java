package io.oncestream.bench.operator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The workers of the benchmark's running pods, idle until told to commit: {@code processes}
 * processes, each with one HTTP server answering for its share ({@link IdleWorkerServer}),
 * the first in this process and the others started by it. One process holds a connection per
 * worker it serves and, after the operator gave up on a long-poll, the old one until its wait
 * ends; so where the open-files limit is below twice the running workers, they are spread over
 * processes, each reached on its own port (deploy/local/operator-benchmark.sh redirects the
 * worker port of {@code 127.(1 + p).0.0/16} to port {@code 8080 + p} on the loopback).
 */
final class IdleWorkers implements AutoCloseable {

    /** A serving process started by this one, and its command pipe. */
    private record Child(Process process, PrintStream commands, BufferedReader answers) {
    }

    private final int processes;
    private final IdleWorkerServer local;
    private final List<Child> children = new ArrayList<>();
    /** What each worker that was told to commit reports now; the others report the first batch. */
    private final Map<Integer, Long> batches = new ConcurrentHashMap<>();

    /**
     * @param namespaces the jobs' namespaces (a job's id follows from its number)
     * @param processes  how many processes serve the workers
     * @param logs       where the other processes' standard error goes
     */
    IdleWorkers(int namespaces, int processes, Path logs) throws IOException {
        this.processes = processes;
        this.local = new IdleWorkerServer(index -> OperatorBenchmark.jobId(index, namespaces), 0, processes);
        try {
            for (int p = 1; p < processes; p++) {
                children.add(start(p, namespaces, logs.resolve("idle-workers-" + p + ".log")));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private Child start(int process, int namespaces, Path log) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-Xmx1g", "-cp", System.getProperty("java.class.path"),
                "-Dsun.net.httpserver.maxIdleConnections=1000000", "-Djava.util.logging.config.file=/dev/null",
                IdleWorkerServer.class.getName(), Integer.toString(process), Integer.toString(processes), Integer.toString(namespaces))
                .redirectError(log.toFile()).start();
        Child started = new Child(child, new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8),
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)));
        expect(started, "ready", "idle workers process " + process + " did not start (its log: " + log + ")");
        return started;
    }

    /** The address of the worker of job number {@code index}. */
    String address(int index) {
        return IdleWorkerServer.address(index, processes);
    }

    /** The batch the worker of job number {@code index} reports committed. */
    long batch(int index) {
        return batches.getOrDefault(index, IdleWorkerServer.FIRST_BATCH);
    }

    /** The worker of job number {@code index} commits one more batch: its next answer says so. */
    void commit(int index) {
        int process = index % processes;
        if (process == 0) {
            local.commit(index);
        } else {
            Child child = children.get(process - 1);
            synchronized (child) {
                child.commands().println("commit " + index);
                expect(child, "ok", "idle workers process " + process + " did not take the commit of worker " + index);
            }
        }
        batches.merge(index, IdleWorkerServer.FIRST_BATCH + 1, (old, one) -> old + 1);
    }

    private static void expect(Child child, String answer, String failure) {
        try {
            String line = child.answers().readLine();
            if (!answer.equals(line)) {
                throw new IllegalStateException(failure + ": got " + line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(failure, e);
        }
    }

    @Override
    public void close() {
        local.close();
        for (Child child : children) {
            child.commands().close();
            try {
                if (!child.process().waitFor(10, TimeUnit.SECONDS)) {
                    child.process().destroyForcibly();
                }
            } catch (InterruptedException e) {
                child.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
