package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import io.oncestream.contract.EngineState;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.testing.Awaits;

/**
 * A watched job is polled every interval and reconciled only when what its workers say
 * changed; a job without a worker address is not polled at all.
 */
class ProgressWatchTest {

    private static final String JOB_ID = "shop/paid-orders";
    private static final ResourceID JOB = new ResourceID("paid-orders", "shop");

    private final AtomicReference<String> document = new AtomicReference<>(ProgressDocuments.healthy(JOB_ID, 0));
    private final AtomicInteger requests = new AtomicInteger();
    private final List<ResourceID> reconciles = new CopyOnWriteArrayList<>();
    private HttpServer server;
    private ProgressWatch watch;

    @AfterEach
    void stop() {
        if (watch != null) {
            watch.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aJobIsReconciledOnlyWhenWhatItsWorkersSayChanged() throws IOException {
        List<WorkerPods.Expected> expected = List.of(new WorkerPods.Expected("paid-orders-0", 0,
                new PodBuilder().withNewMetadata().withName("paid-orders-0").endMetadata().build(), true, serve()));
        ProgressPoller poller = new ProgressPoller(Duration.ofSeconds(2));
        OperatorMetrics metrics = new OperatorMetrics(new SimpleMeterRegistry());
        watch = new ProgressWatch(poller, Duration.ofMillis(50), metrics);
        watch.changes().setEventHandler(event -> reconciles.add(event.getRelatedCustomResourceID()));
        watch.changes().start();

        watch.polled(JOB, JOB_ID, expected, poller.poll(JOB_ID, expected), true, null);
        awaitRequests(10);
        assertThat(reconciles).as("the same answers, round after round: nothing to reconcile").isEmpty();

        document.set(ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, 13, Map.of("orders-0", new long[] {520, 520}), true, null));
        Awaits.until(Duration.ofSeconds(10), "a reconcile after the worker committed batch 13", () -> !reconciles.isEmpty());
        awaitRequests(requests.get() + 10);
        assertThat(reconciles).as("one change, one reconcile").containsExactly(JOB);
        assertThat(watch.pendingJobs()).as("asked for, not yet run: the backlog").isEqualTo(1);

        watch.polled(JOB, JOB_ID, expected, List.of(), false, null);
        assertThat(watch.pendingJobs()).as("the reconcile ran").isZero();
        // A round already under way may still ask once: wait until it has ended (a later one asks nothing) and been answered.
        long rounds = watch.roundsDone();
        Awaits.until(Duration.ofSeconds(10), "the round under way to end and its polls to be answered",
                () -> watch.roundsDone() > rounds && watch.jobsInFlight() == 0);
        int after = requests.get();
        sleep(500); // not a synchronization: ten poll intervals in which nothing may ask
        assertThat(requests.get()).as("no worker with an address: not polled").isEqualTo(after);
        assertThat(watch.watchedJobs()).isZero();
    }

    private void awaitRequests(int count) {
        Awaits.until(Duration.ofSeconds(10), count + " polls", () -> requests.get() >= count);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private String serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        server.createContext("/progress", exchange -> {
            requests.incrementAndGet();
            byte[] body = document.get().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return "127.0.0.1:" + server.getAddress().getPort();
    }
}
