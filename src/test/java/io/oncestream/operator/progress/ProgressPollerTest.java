package io.oncestream.operator.progress;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

import io.oncestream.operator.ProgressDocuments;
import io.oncestream.operator.status.StatusProjection;

/**
 * The poller takes a progress document only from the worker it asked: a pod address that now
 * answers for another worker or another job (an IP reused after a pod was replaced) is reported
 * as unreachable, naming what answered, and never mixed into the job's status.
 */
class ProgressPollerTest {

    private final List<HttpServer> servers = new ArrayList<>();

    @AfterEach
    void stopServers() {
        servers.forEach(s -> s.stop(0));
    }

    /**
     * Workers are spread over the poller's clients, each always asked with the same one (so its
     * kept-alive connection is reused), and 4,000 workers' addresses as the benchmark gives them
     * leave no client with more than twice its share.
     */
    @Test
    void eachWorkerIsAlwaysAskedWithOneClientAndTheWorkersAreSpread() {
        ProgressPoller poller = new ProgressPoller(Duration.ofSeconds(1));
        Map<HttpClient, Integer> perClient = new IdentityHashMap<>();
        for (int i = 0; i < 4000; i++) {
            String address = "127.1." + (i / 256) + "." + (i % 256) + ":8080";
            assertThat(poller.clientFor(address)).isSameAs(poller.clientFor(new String(address.toCharArray())));
            perClient.merge(poller.clientFor(address), 1, Integer::sum);
        }
        assertThat(perClient).hasSize(ProgressPoller.CLIENTS);
        assertThat(perClient.values()).allMatch(n -> n <= 2 * 4000 / ProgressPoller.CLIENTS);
    }

    @Test
    void aDocumentOfAnotherWorkerOrJobIsNotTaken() throws IOException {
        String right0 = serve(ProgressDocuments.healthy("shop/paid-orders", 0));
        String swapped = serve(ProgressDocuments.healthy("shop/paid-orders", 0)); // asked as worker 1
        String otherJob = serve(ProgressDocuments.healthy("shop/refunds", 0));
        List<WorkerPods.Expected> expected = List.of(
                expected(0, right0), expected(1, swapped), expected(0, otherJob));

        List<StatusProjection.Worker> polled = new ProgressPoller(Duration.ofSeconds(5)).poll("shop/paid-orders", expected);

        assertThat(polled.get(0).progress()).isNotNull();
        assertThat(polled.get(0).progress().workerIndex()).isZero();
        assertThat(polled.get(0).unreachable()).isNull();
        assertThat(polled.get(1).progress()).isNull();
        assertThat(polled.get(1).unreachable()).isEqualTo("GET http://" + swapped + "/progress answered as worker 0 of job "
                + "shop/paid-orders, not as worker 1 of shop/paid-orders (a stale pod address?)");
        assertThat(polled.get(2).progress()).isNull();
        assertThat(polled.get(2).unreachable()).contains("answered as worker 0 of job shop/refunds, not as worker 0 of shop/paid-orders");
    }

    /** A container that waits to be restarted cannot answer: its pod's status says why, and is not polled. */
    @Test
    void aCrashLoopingWorkerIsReportedFromItsPodWithoutPolling() throws IOException {
        String answering = serve(ProgressDocuments.healthy("shop/paid-orders", 0)); // would answer if asked
        Pod pod = new PodBuilder().withNewMetadata().withName("paid-orders-0").endMetadata().withNewStatus().withPhase("Running")
                .addNewContainerStatus().withName("worker")
                .withNewState().withNewWaiting().withReason("CrashLoopBackOff").withMessage("back-off 10s restarting failed container")
                .endWaiting().endState()
                .withNewLastState().withNewTerminated().withExitCode(1).withReason("Error")
                .withMessage("Unrecognized VM option 'NoSuchOption'\nError: Could not create the Java Virtual Machine.\n")
                .endTerminated().endLastState()
                .endContainerStatus().endStatus().build();

        List<StatusProjection.Worker> polled = new ProgressPoller(Duration.ofSeconds(5)).poll("shop/paid-orders",
                List.of(new WorkerPods.Expected("paid-orders-0", 0, pod, false, answering)));

        assertThat(polled.get(0).progress()).isNull();
        assertThat(polled.get(0).unreachable()).isEqualTo("container worker: CrashLoopBackOff; last exit code 1: "
                + "Unrecognized VM option 'NoSuchOption' / Error: Could not create the Java Virtual Machine.");
    }

    private String serve(String document) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        server.createContext("/progress", exchange -> {
            byte[] body = document.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        servers.add(server);
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    private static WorkerPods.Expected expected(int ordinal, String address) {
        Pod pod = new PodBuilder().withNewMetadata().withName("paid-orders-" + ordinal).endMetadata().build();
        return new WorkerPods.Expected("paid-orders-" + ordinal, ordinal, pod, true, address);
    }
}
