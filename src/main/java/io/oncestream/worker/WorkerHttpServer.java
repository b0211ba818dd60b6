package io.oncestream.worker;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.oncestream.contract.Progress;
import io.oncestream.contract.WorkerEndpoints;
import io.oncestream.engine.ProgressTracker;

/**
 * The worker's HTTP endpoints: {@code GET /progress} (JSON {@link Progress}, conditional and
 * long-polled as {@link ProgressEndpoint} says), {@code /metrics}
 * (Prometheus text), {@code /healthz/live} (the process answers) and {@code /healthz/ready}
 * (the engine runs and has not failed), and {@code POST /barrier?epoch=N}, by which the operator
 * asks the worker to stop at its next batch boundary for a rescale (docs/protocol.md §11).
 */
final class WorkerHttpServer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final HttpServer server;
    private final ProgressEndpoint progressEndpoint;

    /** What {@code POST /barrier} answers: 202 when the barrier is requested, 4xx with why not. */
    record BarrierAnswer(int status, String message) {
    }

    WorkerHttpServer(String host, int port, Supplier<Progress> progress, Supplier<ProgressTracker.Timings> timings,
            BooleanSupplier ready, IntFunction<BarrierAnswer> barrier) throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 16);
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "worker-http");
            t.setDaemon(true);
            return t;
        }));
        progressEndpoint = new ProgressEndpoint(progress);
        server.createContext(WorkerEndpoints.PROGRESS, progressEndpoint);
        server.createContext(WorkerEndpoints.METRICS, ex -> respond(ex, 200, "text/plain; version=0.0.4",
                PrometheusMetrics.render(progress.get(), timings.get())));
        server.createContext(WorkerEndpoints.LIVE, ex -> respond(ex, 200, "text/plain", "ok\n"));
        server.createContext(WorkerEndpoints.READY, ex -> {
            boolean ok = ready.getAsBoolean();
            respond(ex, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "not ready: " + progress.get().state() + "\n");
        });
        server.createContext(WorkerEndpoints.BARRIER, ex -> {
            try (ex) {
                if (!"POST".equals(ex.getRequestMethod())) {
                    ex.sendResponseHeaders(405, -1);
                    return;
                }
                String query = ex.getRequestURI().getQuery();
                BarrierAnswer answer;
                if (query == null || !query.matches(WorkerEndpoints.EPOCH + "=[1-9][0-9]{0,8}")) {
                    answer = new BarrierAnswer(400, "POST /barrier?epoch=N, with N the epoch the barrier ends this one for");
                } else {
                    answer = barrier.apply(Integer.parseInt(query.substring(WorkerEndpoints.EPOCH.length() + 1)));
                }
                send(ex, answer.status(), "application/json", JSON.writeValueAsString(Map.of("message", answer.message())));
            }
        });
        server.createContext("/", ex -> respond(ex, 404, "application/json",
                JSON.writeValueAsString(Map.of("error", "not found", "endpoints",
                        new String[] {WorkerEndpoints.PROGRESS, WorkerEndpoints.METRICS, WorkerEndpoints.LIVE, WorkerEndpoints.READY,
                                "POST " + WorkerEndpoints.BARRIER + "?" + WorkerEndpoints.EPOCH + "=N"}))));
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    ProgressEndpoint progressEndpoint() {
        return progressEndpoint;
    }

    private static void respond(HttpExchange ex, int status, String type, String body) throws IOException {
        try (ex) {
            if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
                ex.sendResponseHeaders(405, -1);
                return;
            }
            send(ex, status, type, body);
        }
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        progressEndpoint.close();
        server.stop(0);
    }
}
