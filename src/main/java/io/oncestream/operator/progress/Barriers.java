package io.oncestream.operator.progress;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.oncestream.contract.WorkerEndpoints;

/**
 * Asks workers to stop at their next batch boundary for a rescale ({@code POST /barrier?epoch=N},
 * docs/protocol.md §11), all at once, each with a short timeout. Asking twice is harmless, so a
 * worker that did not answer, or restarted, is simply asked again at the next reconcile.
 */
public final class Barriers {

    private final HttpClient http;
    private final Duration timeout;

    public Barriers(Duration timeout) {
        this.timeout = timeout;
        this.http = ProgressPoller.client(timeout);
    }

    /** Requests the barrier for epoch {@code epoch} from each worker; returns what failed, one line per worker. */
    public List<String> request(List<WorkerPods.Expected> workers, int epoch) {
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (WorkerPods.Expected w : workers) {
            if (w.pollAddress() == null) {
                continue;
            }
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + w.pollAddress() + WorkerEndpoints.barrier(epoch)))
                    .timeout(timeout).POST(HttpRequest.BodyPublishers.noBody()).build();
            calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                    .thenApply(r -> r.statusCode() == 202 ? null : w.podName() + ": HTTP " + r.statusCode() + " " + r.body())
                    .exceptionally(e -> w.podName() + ": " + (e.getCause() == null ? e : e.getCause())));
        }
        return calls.stream().map(CompletableFuture::join).filter(java.util.Objects::nonNull).toList();
    }
}
