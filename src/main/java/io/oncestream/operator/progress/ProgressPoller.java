package io.oncestream.operator.progress;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.oncestream.contract.WorkerEndpoints;
import io.oncestream.operator.status.StatusProjection;
import io.oncestream.operator.status.WorkerProgress;

/**
 * Reads {@code GET /progress} of a job's worker pods, all at once, each with a short timeout:
 * a worker that does not answer in time is reported unreachable, it never delays the others.
 */
public final class ProgressPoller {

    private final HttpClient http;
    private final Duration timeout;

    public ProgressPoller(Duration timeout) {
        this.timeout = timeout;
        this.http = client(timeout);
    }

    /** The HTTP client the operator talks to workers with: HTTP/1.1, connect timeout {@code timeout}. */
    static HttpClient client(Duration timeout) {
        return HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * Polls every expected worker of job {@code jobId} at once. A document of another job or
     * another worker index (a stale address, reused by another pod) is not taken: the worker
     * is reported unreachable with what answered.
     */
    public List<StatusProjection.Worker> poll(String jobId, List<WorkerPods.Expected> expected) {
        return pollAsync(jobId, expected).join();
    }

    /** As {@link #poll}, without waiting: completes when every worker answered or timed out (it never fails). */
    public CompletableFuture<List<StatusProjection.Worker>> pollAsync(String jobId, List<WorkerPods.Expected> expected) {
        List<CompletableFuture<StatusProjection.Worker>> calls = new ArrayList<>();
        for (WorkerPods.Expected e : expected) {
            calls.add(pollOne(jobId, e));
        }
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .thenApply(done -> calls.stream().map(CompletableFuture::join).toList());
    }

    private CompletableFuture<StatusProjection.Worker> pollOne(String jobId, WorkerPods.Expected e) {
        if (e.pod() == null) {
            return CompletableFuture.completedFuture(new StatusProjection.Worker(e.podName(), false, false, null, "no pod yet"));
        }
        String problem = WorkerPods.containerProblem(e.pod());
        if (problem != null) { // a waiting container cannot answer: say why it waits instead
            return CompletableFuture.completedFuture(new StatusProjection.Worker(e.podName(), true, e.ready(), null, problem));
        }
        if (e.pollAddress() == null) {
            String phase = e.pod().getStatus() == null || e.pod().getStatus().getPhase() == null
                    ? "Pending" : e.pod().getStatus().getPhase();
            return CompletableFuture.completedFuture(new StatusProjection.Worker(e.podName(), true, e.ready(), null,
                    "pod is " + phase + (e.pod().getMetadata().getDeletionTimestamp() != null ? " (terminating)" : "")));
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + e.pollAddress() + WorkerEndpoints.PROGRESS))
                .timeout(timeout).GET().build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(response -> {
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
                })
                .exceptionally(failure -> {
                    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                    String what = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
                    return new StatusProjection.Worker(e.podName(), true, e.ready(), null,
                            "GET http://" + e.pollAddress() + "/progress failed: " + what);
                });
    }
}
