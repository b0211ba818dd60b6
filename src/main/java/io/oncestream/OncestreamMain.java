package io.oncestream;

import java.util.Arrays;

import io.oncestream.worker.CheckpointCommand;
import io.oncestream.worker.WorkerMain;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * The one entry point of the Oncestream image: {@code operator} (the default) starts the
 * Quarkus operator; {@code worker ...} runs a worker and {@code checkpoint inspect ...} reads a
 * worker's checkpoint, both without starting Quarkus at all.
 */
@QuarkusMain
public final class OncestreamMain {

    private OncestreamMain() {
    }

    public static void main(String... args) {
        if (args.length > 0 && args[0].equals("worker")) {
            WorkerMain.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("checkpoint")) {
            CheckpointCommand.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("operator")) {
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        commonPoolOfAtLeastTwoThreads();
        Quarkus.run(args);
    }

    /**
     * The JDK's HTTP client, with which the operator asks its workers for progress, hands each
     * answer on to CompletableFuture's default executor: the common pool, except where that pool
     * would have one thread (2 CPUs or fewer, as in most operator pods), where it starts a new
     * thread for each answer. With 10,000 running workers that was 700 threads a second (each
     * long-poll's answer), and those threads had a quarter of the operator's CPU samples. Two threads are the fewest for which the pool
     * is used. Set before anything uses the pool; a {@code -D} setting of its own wins.
     */
    private static void commonPoolOfAtLeastTwoThreads() {
        String parallelism = "java.util.concurrent.ForkJoinPool.common.parallelism";
        if (System.getProperty(parallelism) == null && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty(parallelism, "2");
        }
    }
}
