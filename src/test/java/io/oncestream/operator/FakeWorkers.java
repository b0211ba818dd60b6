package io.oncestream.operator;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIPBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

import io.oncestream.api.StreamJobResources;

/**
 * Stand-ins for worker processes, for the operator's tests only (the real worker joins in the
 * e2e suite): one HTTP server per worker pod on its own loopback address and the worker port,
 * replaying progress documents in the worker's format. There is no kubelet, so the test marks
 * the StatefulSet's real pods Running with that address, as a kubelet would.
 */
final class FakeWorkers implements AutoCloseable {

    private static final AtomicInteger NEXT_ADDRESS = new AtomicInteger(1);

    private final Map<String, HttpServer> servers = new ConcurrentHashMap<>();
    private final Map<String, String> documents = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final Map<String, String> addresses = new ConcurrentHashMap<>();
    private final Map<String, List<String>> barriers = new ConcurrentHashMap<>();

    /**
     * Starts a server for {@code pod} on port 8080 of its own 127.0.1.x address (the one it had
     * before, if it was stopped) and returns the address.
     */
    String serve(String pod, String progressJson) {
        String ip = addresses.computeIfAbsent(pod, p -> "127.0.1." + NEXT_ADDRESS.getAndIncrement());
        documents.put(pod, progressJson);
        requests.putIfAbsent(pod, new AtomicInteger());
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(ip, StreamJobResources.WORKER_HTTP_PORT), 16);
            server.createContext("/progress", exchange -> {
                requests.get(pod).incrementAndGet();
                byte[] body = documents.get(pod).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.createContext("/barrier", exchange -> {
                barriers.computeIfAbsent(pod, p -> new java.util.concurrent.CopyOnWriteArrayList<>())
                        .add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getQuery());
                exchange.sendResponseHeaders(202, -1);
                exchange.close();
            });
            server.start();
            servers.put(pod, server);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + ip + ":" + StreamJobResources.WORKER_HTTP_PORT
                    + " (the operator tests need that loopback address and the worker port free)", e);
        }
        return ip;
    }

    void answer(String pod, String progressJson) {
        documents.put(pod, progressJson);
    }

    /** The {@code /barrier} requests the worker got, as {@code "POST epoch=1"}. */
    List<String> barrierRequests(String pod) {
        return barriers.getOrDefault(pod, List.of());
    }

    int requests(String pod) {
        return requests.get(pod).get();
    }

    /** The worker stops answering (its pod still looks Running and ready). */
    void stop(String pod) {
        HttpServer server = servers.remove(pod);
        if (server != null) {
            server.stop(0);
        }
    }

    /** What a kubelet would report: the pod runs at the worker's address and is (not) ready. */
    void markRunning(KubernetesClient admin, String namespace, String pod, boolean ready) {
        String ip = addresses.get(pod);
        admin.pods().inNamespace(namespace).withName(pod).editStatus(p -> new PodBuilder(p).editOrNewStatus()
                .withPhase("Running").withPodIP(ip).withPodIPs(List.of(new PodIPBuilder().withIp(ip).build()))
                .withConditions(new PodConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False").build())
                .endStatus().build());
    }

    @Override
    public void close() {
        servers.values().forEach(s -> s.stop(0));
        servers.clear();
    }
}
