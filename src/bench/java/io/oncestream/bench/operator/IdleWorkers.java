package io.oncestream.bench.operator;

import java.io.IOException;
import java.net.InetSocketAddress;
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
 * The workers of the benchmark's running pods, in its own process: one HTTP server on the
 * worker port of every address, answering at 127.1.x.y as worker 0 of job number
 * {@code x * 256 + y} through the worker's own {@link ProgressEndpoint}, so that they behave as
 * real workers do (ETag, 304, long-polls held without a thread, kept-alive connections). Each is
 * idle after batch 12 until {@link #commit} makes it commit one more.
 */
final class IdleWorkers implements AutoCloseable {

    private static final long FIRST_BATCH = 12;

    /** One fake worker: the document it serves, and its endpoint. */
    private record Worker(AtomicReference<Progress> document, ProgressEndpoint endpoint) {
    }

    private final IntFunction<String> jobIdOf;
    private final HttpServer server;
    private final ScheduledExecutorService waits = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "idle-workers-wait");
        t.setDaemon(true);
        return t;
    });
    private final Map<Integer, Worker> workers = new ConcurrentHashMap<>();

    /** Serves, on every address, worker 0 of the job whose id {@code jobIdOf} gives for the address's number. */
    IdleWorkers(IntFunction<String> jobIdOf) throws IOException {
        this.jobIdOf = jobIdOf;
        server = HttpServer.create(new InetSocketAddress("0.0.0.0", StreamJobResources.WORKER_HTTP_PORT), 512);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/progress", exchange -> worker(index(exchange.getLocalAddress().getAddress().getHostAddress()))
                .endpoint().handle(exchange));
        server.start();
    }

    /** The address of the worker of job number {@code index}. */
    static String address(int index) {
        return "127.1." + (index / 256) + "." + (index % 256);
    }

    private static int index(String ip) {
        String[] octets = ip.split("\\.");
        return Integer.parseInt(octets[2]) * 256 + Integer.parseInt(octets[3]);
    }

    /** The batch the worker of job number {@code index} reports committed. */
    long batch(int index) {
        return worker(index).document().get().batchId();
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
}
