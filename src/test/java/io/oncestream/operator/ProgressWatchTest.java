package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.StatusProjection;
import io.oncestream.testing.Awaits;
import io.oncestream.worker.ProgressEndpoint;

/**
 * A watched job's workers are asked again and again, and the job reconciled only when what they
 * say changed: a worker with long-polls (the worker's own {@link ProgressEndpoint}) answers "not
 * modified" while nothing changes and at once when something does; one that stops answering is
 * reported within two intervals; one without them is asked plainly, once an interval; a job
 * without a worker address is not asked at all.
 */
class ProgressWatchTest {

    private static final String JOB_ID = "shop/paid-orders";
    private static final ResourceID JOB = new ResourceID("paid-orders", "shop");
    /** With a poll timeout of 0.5 s: long-polls of 1 s, an ask of a worker that hangs times out after 1.5 s. */
    private static final Duration INTERVAL = Duration.ofSeconds(1);

    private final AtomicReference<String> document = new AtomicReference<>(ProgressDocuments.healthy(JOB_ID, 0));
    private final AtomicInteger requests = new AtomicInteger();
    /** Requests that carried {@code If-None-Match} or a query: none may reach a worker without ETags. */
    private final AtomicInteger conditional = new AtomicInteger();
    private final List<Long> requestTimes = new CopyOnWriteArrayList<>();
    private final List<ResourceID> reconciles = new CopyOnWriteArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final OperatorMetrics metrics = new OperatorMetrics(registry);
    private HttpServer server;
    private ProgressEndpoint endpoint;
    private CuttableLink link;
    private ProgressWatch watch;

    @AfterEach
    void stop() throws IOException {
        if (watch != null) {
            watch.close();
        }
        if (link != null) {
            link.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void anUnchangedWorkerIsAnsweredNotModifiedAndItsJobNotReconciled() throws IOException {
        watch(serveWithLongPolls(), Duration.ofMillis(500));
        long start = System.nanoTime();

        awaitResults("not_modified", 3);

        assertThat(reconciles).as("the same answers: nothing to reconcile").isEmpty();
        assertThat(polls("answered")).as("no document: the chain went on from the reconcile's ask with its ETag").isZero();
        assertThat(conditional.get()).as("every ask of the chain a long-poll").isEqualTo(requests.get() - 1);
        assertThat(polls("failed")).isZero();
        assertThat(watch.longPollWait()).isEqualTo(Duration.ofSeconds(1));
        double seconds = (System.nanoTime() - start) / 1e9;
        assertThat(requests.get()).as("the reconcile's poll, then at most one ask per interval")
                .isLessThanOrEqualTo(2 + (int) Math.ceil(seconds / INTERVAL.toSeconds()));
    }

    @Test
    void aChangeIsToldByTheAskInFlight() throws IOException {
        watch(serveWithLongPolls(), Duration.ofMillis(500));
        awaitResults("not_modified", 1);
        int before = requests.get();
        long changed = System.nanoTime();

        document.set(ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, 13, Map.of("orders-0", new long[] {520, 520}), true, null));
        Awaits.until(Duration.ofSeconds(10), "a reconcile after the worker committed batch 13", () -> !reconciles.isEmpty());

        assertThat(requests.get() - before).as("the long-poll in flight, or the one right after it, told it").isLessThanOrEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - changed)).as("within one interval and the worker's one-second look,"
                + " with a second to spare for a busy machine").isLessThan(INTERVAL.plusSeconds(2));
        assertThat(reconciles).containsExactly(JOB);
        assertThat(watch.pendingJobs()).as("asked for, not yet run: the backlog").isEqualTo(1);
    }

    @Test
    void aReconcileTakesTheAnswersTheLongPollsHoldAndAsksNoWorker() throws IOException {
        String address = serveWithLongPolls();
        watch(address, Duration.ofMillis(500));
        awaitResults("not_modified", 1);
        List<WorkerPods.Expected> expected = expected(address);
        ProgressPoller poller = new ProgressPoller(Duration.ofMillis(500));

        int before = requests.get();
        List<StatusProjection.Worker> known = watch.known(JOB, expected);
        List<StatusProjection.Worker> polled = poller.poll(JOB_ID, expected, known).workers();
        assertThat(requests.get()).as("no ask: the long-poll in flight vouches for the answer").isEqualTo(before);
        assertThat(polled.get(0).progress().batchId()).isEqualTo(12);
        assertThat(polled.get(0).unreachable()).isNull();

        document.set(ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, 13, Map.of("orders-0", new long[] {520, 520}), true, null));
        Awaits.until(Duration.ofSeconds(10), "a reconcile after the worker committed batch 13", () -> !reconciles.isEmpty());
        assertThat(watch.known(JOB, expected).get(0).progress().batchId())
                .as("the reconcile the change asked for sees the change").isEqualTo(13);

        WorkerPods.Expected notReady = new WorkerPods.Expected("paid-orders-0", 0, expected.get(0).pod(), false, address);
        assertThat(watch.known(JOB, List.of(notReady)).get(0).podReady()).as("readiness is the pod's now").isFalse();
        WorkerPods.Expected elsewhere = new WorkerPods.Expected("paid-orders-0", 0, expected.get(0).pod(), true, "127.0.0.2:1");
        assertThat(watch.known(JOB, List.of(elsewhere))).as("another address: asked").containsOnlyNulls();
        assertThat(watch.known(new ResourceID("other", "shop"), expected)).as("a job not watched: asked").containsOnlyNulls();
    }

    @Test
    void workersWithoutLongPollsOrWhoseLastAskFailedAreAskedByTheReconcile() throws IOException {
        String plain = servePlain();
        watch(plain, Duration.ofMillis(500));
        awaitRequests(3);
        assertThat(watch.known(JOB, expected(plain))).as("no ETag: nothing vouches for the answer").containsOnlyNulls();
        watch.close();
        server.stop(0);
        reconciles.clear();

        serveWithLongPolls();
        link = new CuttableLink(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getAddress().getPort()));
        watch(link.address(), Duration.ofMillis(500));
        awaitResults("not_modified", 1);
        assertThat(watch.known(JOB, expected(link.address()))).doesNotContainNull();
        link.cut();
        Awaits.until(Duration.ofSeconds(10), "the worker reported as not answering", () -> !reconciles.isEmpty());
        assertThat(watch.known(JOB, expected(link.address()))).as("the last ask failed: asked").containsOnlyNulls();
    }

    @Test
    void aWorkerThatStopsAnsweringIsReportedWithinTwoIntervals() throws IOException {
        serveWithLongPolls();
        link = new CuttableLink(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getAddress().getPort()));
        watch(link.address(), Duration.ofMillis(500));
        awaitResults("not_modified", 1);
        long cut = System.nanoTime();

        link.cut();
        Awaits.until(Duration.ofSeconds(10), "the worker reported as not answering", () -> !reconciles.isEmpty());

        assertThat(Duration.ofNanos(System.nanoTime() - cut)).as("the long-poll in flight times out (wait + timeout, 1.5 s), then"
                + " the ask right after it (0.5 s): within two intervals, with a second to spare for a busy machine")
                .isLessThan(INTERVAL.multipliedBy(2).plusSeconds(1));
        assertThat(polls("retried")).as("the first time-out: asked again").isEqualTo(1);
        assertThat(polls("failed")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aWorkerThatAnswersOneAskLateIsAskedAgainAndNotReported() throws IOException {
        AtomicInteger late = new AtomicInteger();
        endpoint = new ProgressEndpoint(() -> Progress.parse(document.get()));
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.createContext("/progress", counting(exchange -> {
            if (late.compareAndSet(1, 2)) {
                sleep(2_500); // past this long-poll's wait and timeout (1.5 s): the operator has given up on it
            }
            endpoint.handle(exchange);
        }));
        server.start();
        watch("127.0.0.1:" + server.getAddress().getPort(), Duration.ofMillis(500));
        awaitResults("not_modified", 1);

        late.set(1);
        awaitResults("retried", 1);
        awaitResults("not_modified", 3);

        assertThat(late.get()).as("the late answer was given").isEqualTo(2);
        assertThat(polls("failed")).as("one late answer is not reported").isZero();
        assertThat(reconciles).as("nothing changed: nothing to reconcile").isEmpty();
    }

    @Test
    void aWorkerWhoseProcessEndedIsReportedWithoutAskingAgain() throws IOException {
        watch(serveWithLongPolls(), Duration.ofMillis(500));
        awaitResults("not_modified", 1);

        server.stop(0); // the held long-poll's connection closes; a new one is refused
        server = null;
        endpoint.close();
        endpoint = null;
        Awaits.until(Duration.ofSeconds(10), "the worker reported as not answering", () -> !reconciles.isEmpty());

        assertThat(polls("retried")).as("a closed or refused connection is no late answer").isZero();
        assertThat(polls("failed")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aWorkerWithoutETagsIsAskedPlainlyOnceAnInterval() throws IOException {
        watch(servePlain(), Duration.ofMillis(500));

        awaitRequests(5);

        assertThat(conditional.get()).as("no If-None-Match, no wait: as before").isZero();
        assertThat(reconciles).isEmpty();
        for (int i = 2; i < requestTimes.size(); i++) {
            assertThat(Duration.ofNanos(requestTimes.get(i) - requestTimes.get(i - 1))).as("asks at least an interval apart, request %d", i)
                    .isGreaterThan(INTERVAL.minusMillis(100));
        }
    }

    @Test
    void aWorkerThatAnswersAtOnceIsNotAskedInAHotLoop() throws IOException {
        AtomicInteger batch = new AtomicInteger(12);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/progress", counting(exchange -> {
            int id = batch.incrementAndGet(); // changes every time, and ignores the wait
            exchange.getResponseHeaders().set("ETag", "\"x-" + id + "\"");
            send(exchange, ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, id, Map.of("orders-0", new long[] {500, 500}), true, null));
        }));
        server.start();
        watch("127.0.0.1:" + server.getAddress().getPort(), Duration.ofMillis(500));

        awaitRequests(5);

        for (int i = 2; i < requestTimes.size(); i++) {
            assertThat(Duration.ofNanos(requestTimes.get(i) - requestTimes.get(i - 1))).as("asks at least an interval apart, request %d", i)
                    .isGreaterThan(INTERVAL.minusMillis(100));
        }
        assertThat(reconciles).as("every answer is a change").isNotEmpty();
    }

    @Test
    void aJobIsReconciledOnlyWhenWhatItsWorkersSayChangedAndNotAskedWithoutAddresses() throws IOException {
        List<WorkerPods.Expected> expected = expected(servePlain());
        ProgressPoller poller = new ProgressPoller(Duration.ofSeconds(2));
        watch = new ProgressWatch(poller, Duration.ofMillis(50), metrics);
        watch.changes().setEventHandler(event -> reconciles.add(event.getRelatedCustomResourceID()));
        watch.changes().start();

        watch.polled(JOB, JOB_ID, expected, poller.poll(JOB_ID, expected, Collections.nCopies(expected.size(), null)), true, null);
        awaitRequests(10);
        assertThat(reconciles).as("the same answers, ask after ask: nothing to reconcile").isEmpty();

        document.set(ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, 13, Map.of("orders-0", new long[] {520, 520}), true, null));
        Awaits.until(Duration.ofSeconds(10), "a reconcile after the worker committed batch 13", () -> !reconciles.isEmpty());
        awaitRequests(requests.get() + 10);
        assertThat(reconciles).as("one change, one reconcile").containsExactly(JOB);
        assertThat(watch.pendingJobs()).as("asked for, not yet run: the backlog").isEqualTo(1);

        watch.polled(JOB, JOB_ID, expected, new ProgressPoller.Answers(List.of(), List.of()), false, null);
        assertThat(watch.pendingJobs()).as("the reconcile ran").isZero();
        assertThat(watch.watchedWorkers()).isZero();
        // An ask already sent may still arrive: wait until none is in flight and the count stands still.
        Awaits.until(Duration.ofSeconds(10), "the asks in flight to be answered", () -> watch.asksInFlight() == 0);
        awaitSteady();
        int after = requests.get();
        sleep(500); // not a synchronization: ten intervals in which nothing may ask
        assertThat(requests.get()).as("no worker with an address: not asked").isEqualTo(after);
        assertThat(watch.watchedJobs()).isZero();
    }

    /** A watch with {@link #INTERVAL} over one worker at {@code address}, after a reconcile polled it. */
    private void watch(String address, Duration timeout) {
        List<WorkerPods.Expected> expected = expected(address);
        ProgressPoller poller = new ProgressPoller(timeout);
        watch = new ProgressWatch(poller, INTERVAL, metrics);
        watch.changes().setEventHandler(event -> reconciles.add(event.getRelatedCustomResourceID()));
        watch.changes().start();
        watch.polled(JOB, JOB_ID, expected, poller.poll(JOB_ID, expected, Collections.nCopies(expected.size(), null)), true, null);
    }

    private static List<WorkerPods.Expected> expected(String address) {
        return List.of(new WorkerPods.Expected("paid-orders-0", 0,
                new PodBuilder().withNewMetadata().withName("paid-orders-0").endMetadata().build(), true, address));
    }

    private double polls(String result) {
        return registry.get("oncestream_operator_progress_polls").tag("result", result).counter().count();
    }

    private void awaitResults(String result, int count) {
        Awaits.until(Duration.ofSeconds(20), count + " asks ending " + result, () -> polls(result) >= count);
    }

    private void awaitRequests(int count) {
        Awaits.until(Duration.ofSeconds(20), count + " requests", () -> requests.get() >= count);
    }

    private void awaitSteady() {
        AtomicInteger last = new AtomicInteger(-1);
        Awaits.until(Duration.ofSeconds(10), "no more requests arriving", () -> last.getAndSet(requests.get()) == requests.get());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The worker's own endpoint, serving {@link #document}. */
    private String serveWithLongPolls() throws IOException {
        endpoint = new ProgressEndpoint(() -> Progress.parse(document.get()));
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/progress", counting(endpoint));
        server.start();
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    /** A worker that predates ETags: {@link #document} to any GET. */
    private String servePlain() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/progress", counting(exchange -> send(exchange, document.get())));
        server.start();
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    private HttpHandler counting(HttpHandler handler) {
        return exchange -> {
            requests.incrementAndGet();
            requestTimes.add(System.nanoTime());
            if (exchange.getRequestHeaders().containsKey("If-None-Match") || exchange.getRequestURI().getRawQuery() != null) {
                conditional.incrementAndGet();
            }
            handler.handle(exchange);
        };
    }

    private static void send(HttpExchange exchange, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
