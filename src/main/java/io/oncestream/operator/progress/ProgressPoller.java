package io.oncestream.operator.progress;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.oncestream.contract.WorkerEndpoints;
import io.oncestream.operator.status.StatusProjection;
import io.oncestream.operator.status.WorkerProgress;

/**
 * Reads {@code GET /progress} of a job's worker pods, all at once, each with a short timeout:
 * a worker that does not answer in time is reported unreachable, it never delays the others.
 * {@link #ask} asks one worker, also conditionally, for the chains of {@link ProgressChain}.
 */
public final class ProgressPoller {

    /**
     * Clients the workers are spread over, each worker always on the same one (its connection is
     * reused). A client keeps its idle connections in a list that it searches from end to end each
     * time it takes or drops one (the JDK's {@code ConnectionPool$ExpiryList}): with one client
     * and 4,000 running workers that search was a quarter of the operator's CPU at rest
     * (docs/benchmarks.md); spread over {@value #CLIENTS} clients each list is that much shorter.
     */
    static final int CLIENTS = 16;

    private final HttpClient[] clients;
    private final Duration timeout;

    public ProgressPoller(Duration timeout) {
        this.timeout = timeout;
        ExecutorService answers = answerThreads();
        this.clients = new HttpClient[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            clients[i] = client(timeout, answers);
        }
    }

    /** The client worker {@code address} is always asked with. */
    HttpClient clientFor(String address) {
        return clients[Math.floorMod(address.hashCode(), CLIENTS)];
    }

    /** The timeout of one plain request (connect and answer). */
    public Duration timeout() {
        return timeout;
    }

    /**
     * The HTTP client the operator talks to workers with: HTTP/1.1, whose connections are kept
     * alive and reused by the next request to the same worker, connect timeout {@code timeout}.
     * Its answers are handed on by {@value #HTTP_THREADS} threads of its own: the client's
     * default executor starts a thread for each answer when none is free, and with 10,000
     * workers' long-polls coming back together the operator ran over 1,000 such threads, most of
     * its CPU going to creating them and to the garbage collector scanning their stacks.
     */
    static HttpClient client(Duration timeout) {
        return client(timeout, answerThreads());
    }

    private static HttpClient client(Duration timeout, Executor answers) {
        return HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).executor(answers).build();
    }

    private static ExecutorService answerThreads() {
        return Executors.newFixedThreadPool(HTTP_THREADS, r -> {
            Thread t = new Thread(r, "progress-http");
            t.setDaemon(true);
            return t;
        });
    }

    /** Threads that hand on the workers' answers (parsing a document is the most any of them does). */
    static final int HTTP_THREADS = 2;

    /**
     * Polls every expected worker of job {@code jobId} at once. A document of another job or
     * another worker index (a stale address, reused by another pod) is not taken: the worker
     * is reported unreachable with what answered.
     */
    public List<StatusProjection.Worker> poll(String jobId, List<WorkerPods.Expected> expected) {
        return poll(jobId, expected, Collections.nCopies(expected.size(), null)).workers();
    }

    /**
     * What a poll of a job's workers came back with, one entry per expected worker: its entry,
     * and the ETag of the document it answered with (null where it sent none, failed or was not asked).
     */
    public record Answers(List<StatusProjection.Worker> workers, List<String> etags) {
    }

    /**
     * As {@link #poll}, except that a worker whose entry in {@code known} (one per expected
     * worker) is not null is not asked: that entry is taken as its answer.
     */
    public Answers poll(String jobId, List<WorkerPods.Expected> expected, List<StatusProjection.Worker> known) {
        if (known.size() != expected.size()) {
            throw new IllegalArgumentException(known.size() + " known entries for " + expected.size() + " workers");
        }
        List<CompletableFuture<Asked>> calls = new ArrayList<>();
        for (int i = 0; i < expected.size(); i++) {
            StatusProjection.Worker answer = known.get(i);
            calls.add(answer != null ? CompletableFuture.completedFuture(new Asked(answer, null, false, false))
                    : pollOne(jobId, expected.get(i)));
        }
        List<Asked> asked = calls.stream().map(CompletableFuture::join).toList();
        return new Answers(asked.stream().map(Asked::worker).toList(), asked.stream().map(Asked::etag).toList());
    }

    /**
     * Whether {@link #poll} asks worker {@code e} over HTTP: its pod runs with an address and no
     * container waits (otherwise its entry says why, without a request).
     */
    public static boolean asksOverHttp(WorkerPods.Expected e) {
        return e.pod() != null && e.pollAddress() != null && WorkerPods.containerProblem(e.pod()) == null;
    }

    private CompletableFuture<Asked> pollOne(String jobId, WorkerPods.Expected e) {
        StatusProjection.Worker unasked = unasked(e);
        return unasked != null ? CompletableFuture.completedFuture(new Asked(unasked, null, false, false))
                : ask(jobId, e, null, Duration.ZERO);
    }

    /** The entry of a worker that is not asked over HTTP, saying why; null for one that {@link #asksOverHttp}. */
    private static StatusProjection.Worker unasked(WorkerPods.Expected e) {
        if (e.pod() == null) {
            return new StatusProjection.Worker(e.podName(), false, false, null, "no pod yet");
        }
        String problem = WorkerPods.containerProblem(e.pod());
        if (problem != null) { // a waiting container cannot answer: say why it waits instead
            return new StatusProjection.Worker(e.podName(), true, e.ready(), null, problem);
        }
        if (e.pollAddress() == null) {
            String phase = e.pod().getStatus() == null || e.pod().getStatus().getPhase() == null
                    ? "Pending" : e.pod().getStatus().getPhase();
            return new StatusProjection.Worker(e.podName(), true, e.ready(), null,
                    "pod is " + phase + (e.pod().getMetadata().getDeletionTimestamp() != null ? " (terminating)" : ""));
        }
        return null;
    }

    /**
     * What one ask of a worker came back with: its entry (null when the worker said "not
     * modified"), the ETag that stands for the document it answered with (null from a worker
     * that sends none, and after a failure), and whether it failed by timing out (connecting or
     * waiting for the answer) rather than by a refused, reset or wrong answer.
     */
    public record Asked(StatusProjection.Worker worker, String etag, boolean notModified, boolean timedOut) {
    }

    /**
     * Asks worker {@code e}, which {@link #asksOverHttp}, for {@code /progress}: plainly (as
     * {@link #poll} does) when {@code etag} is null, else with {@code If-None-Match: etag} and, if
     * {@code wait} is a second or more, {@code ?wait=} that many seconds, which a worker may hold
     * the request for: the request's timeout is then the wait plus this poller's timeout. Never
     * fails: a failure is an entry that says what went wrong.
     */
    public CompletableFuture<Asked> ask(String jobId, WorkerPods.Expected e, String etag, Duration wait) {
        long waitSeconds = etag == null ? 0 : wait.toSeconds();
        String path = waitSeconds > 0 ? WorkerEndpoints.progressWait(waitSeconds) : WorkerEndpoints.PROGRESS;
        CompletableFuture<HttpResponse<String>> call;
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + e.pollAddress() + path))
                    .timeout(timeout.plusSeconds(waitSeconds)).GET();
            if (etag != null) {
                request.header("If-None-Match", etag);
            }
            call = clientFor(e.pollAddress()).sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IllegalArgumentException bad) { // an address no URI can hold: the worker's entry says so
            call = CompletableFuture.failedFuture(bad);
        }
        return call
                .thenApply(response -> {
                    if (etag != null && response.statusCode() == 304) {
                        return new Asked(null, etag, true, false);
                    }
                    StatusProjection.Worker worker = answer(jobId, e, response);
                    return new Asked(worker, worker.progress() == null ? null : response.headers().firstValue("ETag").orElse(null), false, false);
                })
                .exceptionally(failure -> {
                    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                    String what = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
                    return new Asked(new StatusProjection.Worker(e.podName(), true, e.ready(), null,
                            "GET http://" + e.pollAddress() + "/progress failed: " + what), null, false,
                            cause instanceof java.net.http.HttpTimeoutException);
                });
    }

    /** The entry of a worker that answered: its document if it is one, of this job and index; else what is wrong. */
    private static StatusProjection.Worker answer(String jobId, WorkerPods.Expected e, HttpResponse<String> response) {
        if (response.statusCode() != 200) {
            return new StatusProjection.Worker(e.podName(), true, e.ready(), null,
                    "GET /progress answered HTTP " + response.statusCode());
        }
        try {
            WorkerProgress progress = WorkerProgress.parse(response.body());
            if (!jobId.equals(progress.jobId()) || progress.workerIndex() != e.ordinal()) {
                return new StatusProjection.Worker(e.podName(), true, e.ready(), null, "GET http://" + e.pollAddress()
                        + "/progress answered as worker " + progress.workerIndex() + " of job " + progress.jobId()
                        + ", not as worker " + e.ordinal() + " of " + jobId + " (a stale pod address?)");
            }
            return new StatusProjection.Worker(e.podName(), true, e.ready(), progress, null);
        } catch (IllegalArgumentException bad) {
            return new StatusProjection.Worker(e.podName(), true, e.ready(), null, bad.getMessage());
        }
    }
}
