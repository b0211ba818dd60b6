package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.operator.ProgressDocuments;
import io.oncestream.testing.Awaits;

/**
 * {@code GET /progress} on the worker's own server (two threads): plain as it always was, with an
 * ETag that follows what the document says; conditional (304); and long-polled without taking
 * the server's threads, at most {@link ProgressEndpoint#MAX_HELD} held at once.
 */
class ProgressEndpointTest {

    private static final String JOB_ID = "shop/paid-orders";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final AtomicReference<Progress> progress = new AtomicReference<>(document(12, "2026-12-02T10:00:00Z"));
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private WorkerHttpServer server;

    @BeforeEach
    void start() throws IOException {
        server = new WorkerHttpServer("127.0.0.1", 0, progress::get, () -> null, () -> true,
                epoch -> new WorkerHttpServer.BarrierAnswer(409, "no barrier here"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void aPlainGetAnswersTheDocumentAsBeforeWithAnETag() throws Exception {
        HttpResponse<String> answer = get("/progress", null);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(answer.body()).as("the document exactly as the worker always wrote it")
                .isEqualTo(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(progress.get()));
        assertThat(answer.headers().firstValue("ETag")).hasValueSatisfying(tag -> assertThat(tag).matches("\"[0-9a-z]+-[0-9]+\""));
    }

    @Test
    void theCurrentTagIsAnsweredNotModifiedAndAChangeWithTheDocument() throws Exception {
        String tag = get("/progress", null).headers().firstValue("ETag").orElseThrow();

        HttpResponse<String> same = get("/progress", tag);
        assertThat(same.statusCode()).isEqualTo(304);
        assertThat(same.body()).isEmpty();
        assertThat(same.headers().firstValue("ETag")).hasValue(tag);

        progress.set(document(12, "2026-12-02T10:00:07Z"));
        assertThat(get("/progress", tag).statusCode()).as("only the time of the snapshot differs: not modified").isEqualTo(304);
        assertThat(get("/progress", "\"other-1\", W/" + tag).statusCode()).as("a list that names it, weakly").isEqualTo(304);

        progress.set(document(13, "2026-12-02T10:00:08Z"));
        HttpResponse<String> changed = get("/progress", tag);
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(Progress.parse(changed.body()).batchId()).isEqualTo(13);
        assertThat(changed.headers().firstValue("ETag")).isPresent().isNotEqualTo(java.util.Optional.of(tag));
    }

    @Test
    void theVersionLeavesOutTheTimesOfTheSnapshotAndOfTheLagProbeOnly() {
        Progress probed = withLag(document(12, "2026-12-02T10:00:00Z"), "2026-12-02T10:00:00Z", 20);
        Progress probedAgain = withLag(document(12, "2026-12-02T10:00:05Z"), "2026-12-02T10:00:05Z", 20);
        Progress moreLag = withLag(document(12, "2026-12-02T10:00:05Z"), "2026-12-02T10:00:05Z", 30);

        assertThat(ProgressEndpoint.versioned(probedAgain)).isEqualTo(ProgressEndpoint.versioned(probed));
        assertThat(ProgressEndpoint.versioned(moreLag)).isNotEqualTo(ProgressEndpoint.versioned(probed));
    }

    @Test
    void aLongPollIsAnsweredWhenTheDocumentChanges() throws Exception {
        String tag = get("/progress", null).headers().firstValue("ETag").orElseThrow();
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<String>> held = getAsync("/progress?wait=30", tag);
        Awaits.until(Duration.ofSeconds(10), "the request to be held", () -> endpointHeld() == 1);

        progress.set(document(13, "2026-12-02T10:00:01Z"));
        HttpResponse<String> answer = held.get(20, TimeUnit.SECONDS);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(Progress.parse(answer.body()).batchId()).isEqualTo(13);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("answered on the change, long before its wait ended")
                .isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void aLongPollWithoutAChangeIsAnsweredNotModifiedWhenItsWaitEnds() throws Exception {
        String tag = get("/progress", null).headers().firstValue("ETag").orElseThrow();
        long start = System.nanoTime();

        HttpResponse<String> answer = get("/progress?wait=1", tag);

        assertThat(answer.statusCode()).isEqualTo(304);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("held for its wait").isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(endpointHeld()).isZero();
    }

    @Test
    void heldRequestsTakeNoServerThreadAndAtMostEightAreHeld() throws Exception {
        String tag = get("/progress", null).headers().firstValue("ETag").orElseThrow();
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < ProgressEndpoint.MAX_HELD; i++) {
            held.add(getAsync("/progress?wait=60", tag));
        }
        Awaits.until(Duration.ofSeconds(10), "eight requests held", () -> endpointHeld() == ProgressEndpoint.MAX_HELD);

        assertThat(get("/healthz/live", null).statusCode()).as("the server's two threads are free").isEqualTo(200);
        HttpResponse<String> ninth = getAsync("/progress?wait=60", tag).get(20, TimeUnit.SECONDS);
        assertThat(ninth.statusCode()).as("one more is answered at once, as a plain conditional GET").isEqualTo(304);
        assertThat(held).noneMatch(CompletableFuture::isDone);

        progress.set(document(13, "2026-12-02T10:00:01Z"));
        for (CompletableFuture<HttpResponse<String>> request : held) {
            assertThat(request.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(endpointHeld()).isZero();
    }

    @Test
    void aWaitWithoutATagIsAnsweredAtOnce() throws Exception {
        HttpResponse<String> answer = getAsync("/progress?wait=60", null).get(20, TimeUnit.SECONDS);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("ETag")).isPresent();
    }

    @Test
    void theWaitIsReadInWholeSecondsUpToAMinute() {
        assertThat(ProgressEndpoint.waitSeconds("wait=8")).isEqualTo(8);
        assertThat(ProgressEndpoint.waitSeconds("x=1&wait=3600")).isEqualTo(60);
        assertThat(ProgressEndpoint.waitSeconds("wait=-1")).isZero();
        assertThat(ProgressEndpoint.waitSeconds("wait=1.5")).isZero();
        assertThat(ProgressEndpoint.waitSeconds(null)).isZero();
    }

    private int endpointHeld() {
        return server.progressEndpoint().held();
    }

    private HttpResponse<String> get(String path, String ifNoneMatch) throws Exception {
        return getAsync(path, ifNoneMatch).get(20, TimeUnit.SECONDS);
    }

    private CompletableFuture<HttpResponse<String>> getAsync(String path, String ifNoneMatch) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(90)).GET();
        if (ifNoneMatch != null) {
            request.header("If-None-Match", ifNoneMatch);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Worker 0 idle after batch {@code batchId}, its snapshot taken at {@code updatedAt}. */
    private static Progress document(long batchId, String updatedAt) {
        String json = ProgressDocuments.json(JOB_ID, 0, EngineState.IDLE, batchId, Map.of("orders-0", new long[] {500, 520}), true, null);
        return Progress.parse(json.replace("2026-12-02T10:00:00Z", updatedAt));
    }

    /** {@code document} with a lag report probed at {@code observedAt}: {@code records} behind on orders-0. */
    private static Progress withLag(Progress document, String observedAt, long records) {
        ObjectNode tree = JSON.valueToTree(document);
        ObjectNode lag = tree.putObject("lag");
        lag.put("observedAt", observedAt);
        lag.putObject("partitions").putObject("orders-0").put("committed", 500).put("latest", 500 + records)
                .put("records", records).put("ageMs", 0).put("exact", true);
        return JSON.convertValue(tree, Progress.class);
    }
}
