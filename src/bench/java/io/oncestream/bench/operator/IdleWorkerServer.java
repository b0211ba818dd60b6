package io.oncestream.bench.operator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import com.sun.net.httpserver.HttpServer;

import io.oncestream.api.StreamJobResources;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.operator.ProgressDocuments;
import io.oncestream.worker.ProgressEndpoint;

/**
 * One process's share of the benchmark's idle workers ({@link IdleWorkers}): one HTTP server
 * on port {@code 8080 + process} of every address, answering at {@code 127.(1 + process).x.y}
 * as worker 0 of its job through the worker's own {@link ProgressEndpoint}, so that they
 * behave as real workers do (ETag, 304, long-polls held without a thread, kept-alive
 * connections). Each is idle after batch 12 until {@link #commit} makes it commit one more.
 *
 * <p>Run as a process of its own ({@link #main}), it takes {@code commit INDEX} lines on its
 * standard input and answers each with {@code ok} once the worker's next answer says so.
 */
final class IdleWorkerServer implements AutoCloseable {

    /** The batch every idle worker reports first. */
    static final long FIRST_BATCH = 12;

    /** One fake worker: the document it serves, and its endpoint. */
    private record Worker(AtomicReference<Progress> document, ProgressEndpoint endpoint) {
    }

    private final IntFunction<String> jobIdOf;
    private final int processes;
    private final HttpServer server;
    private final ScheduledExecutorService waits = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "idle-workers-wait");
        t.setDaemon(true);
        return t;
    });
    private final Map<Integer, Worker> workers = new ConcurrentHashMap<>();

    /** Serves the workers of process {@code process} of {@code processes}, job ids from {@code jobIdOf}. */
    IdleWorkerServer(IntFunction<String> jobIdOf, int process, int processes) throws IOException {
        this.jobIdOf = jobIdOf;
        this.processes = processes;
        server = HttpServer.create(new InetSocketAddress("0.0.0.0", port(process)), 512);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/progress", exchange -> worker(index(exchange.getLocalAddress().getAddress().getHostAddress(), processes))
                .endpoint().handle(exchange));
        server.start();
    }

    /** The port process {@code process} listens on: the worker port for the first, the ports after it for the others. */
    static int port(int process) {
        return StreamJobResources.WORKER_HTTP_PORT + process;
    }

    /** The address of the worker of job number {@code index}: {@code 127.(1 + index % processes).x.y}. */
    static String address(int index, int processes) {
        int process = index % processes;
        int within = index / processes;
        return "127." + (1 + process) + "." + (within / 256) + "." + (within % 256);
    }

    /** The job number whose worker has address {@code ip} (the inverse of {@link #address}). */
    static int index(String ip, int processes) {
        String[] octets = ip.split("\\.");
        int within = Integer.parseInt(octets[2]) * 256 + Integer.parseInt(octets[3]);
        return within * processes + Integer.parseInt(octets[1]) - 1;
    }

    /** The worker of job number {@code index} commits one more batch of 10 records: its next answer says so. */
    void commit(int index) {
        Worker worker = worker(index);
        worker.document().set(document(index, worker.document().get().batchId() + 1));
    }

    private Worker worker(int index) {
        return workers.computeIfAbsent(index, i -> {
            AtomicReference<Progress> document = new AtomicReference<>(document(i, FIRST_BATCH));
            return new Worker(document, new ProgressEndpoint(document::get, waits));
        });
    }

    /** Worker 0 idle after batch {@code batchId}, 10 records a batch from offset 500, no lag. */
    private Progress document(int index, long batchId) {
        long offset = 500 + 10 * (batchId - FIRST_BATCH);
        return Progress.parse(ProgressDocuments.json(jobIdOf.apply(index), 0, EngineState.IDLE, batchId,
                Map.of("orders-0", new long[] {offset, offset}), true, null));
    }

    @Override
    public void close() {
        workers.values().forEach(w -> w.endpoint().close());
        server.stop(0);
        waits.shutdownNow();
    }

    /**
     * A process of its own serving process {@code args[0]} of {@code args[1]}, for jobs spread
     * over {@code args[2]} namespaces; says {@code ready} once it listens, then answers its
     * standard input until it ends.
     */
    public static void main(String[] args) throws IOException {
        int process = Integer.parseInt(args[0]);
        int processes = Integer.parseInt(args[1]);
        int namespaces = Integer.parseInt(args[2]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (IdleWorkerServer server = new IdleWorkerServer(index -> OperatorBenchmark.jobId(index, namespaces), process, processes);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            out.println("ready");
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (!line.startsWith("commit ")) {
                    throw new IllegalArgumentException("not a command: " + line);
                }
                server.commit(Integer.parseInt(line.substring("commit ".length())));
                out.println("ok");
            }
        }
        System.exit(0);
    }
}
