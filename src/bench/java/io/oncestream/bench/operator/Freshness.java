package io.oncestream.bench.operator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;

/**
 * How fresh the status is: the time from a fake worker's change to its StreamJob's status
 * showing it (worker 0's {@code batchId} in {@code status.workers}), seen through an informer of
 * this process. As {@link CountingStore}, its store keeps no objects: only the changes awaited.
 */
final class Freshness implements ItemStore<StreamJob>, AutoCloseable {

    /** A change awaited: the batch the status should show, and when the worker changed ({@link System#nanoTime()}). */
    private record Awaited(long batchId, long changedAt) {
    }

    private final Map<String, Awaited> awaited = new ConcurrentHashMap<>();
    private final List<Long> latencies = new CopyOnWriteArrayList<>();
    private final Map<String, Boolean> keys = new ConcurrentHashMap<>();
    private final SharedIndexInformer<StreamJob> informer;

    Freshness(KubernetesClient admin) {
        informer = admin.resources(StreamJob.class).inAnyNamespace().runnableInformer(0);
        informer.itemStore(this);
        informer.run();
    }

    /** The status of job {@code namespace/name} should come to show batch {@code batchId}, which its worker reached now. */
    void expect(String namespace, String name, long batchId) {
        awaited.put(namespace + "/" + name, new Awaited(batchId, System.nanoTime()));
    }

    /** Changes awaited and not yet shown. */
    int awaiting() {
        return awaited.size();
    }

    /** The times from change to status of the changes shown since the last call, and forgets them. */
    List<Duration> take() {
        List<Duration> out = new ArrayList<>();
        for (Long nanos : latencies) {
            out.add(Duration.ofNanos(nanos));
        }
        latencies.clear();
        return out;
    }

    /** p50, p99 and max of {@code times}, in seconds. */
    static String describe(List<Duration> times) {
        if (times.isEmpty()) {
            return "none seen";
        }
        List<Long> sorted = times.stream().map(Duration::toMillis).sorted().toList();
        return String.format(Locale.ROOT, "p50 %.2f s, p99 %.2f s, max %.2f s (%d changes)", percentile(sorted, 0.50) / 1000.0,
                percentile(sorted, 0.99) / 1000.0, sorted.get(sorted.size() - 1) / 1000.0, sorted.size());
    }

    private static long percentile(List<Long> sorted, double p) {
        return sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(p * sorted.size()) - 1));
    }

    private static Long workerBatch(StreamJob job) {
        StreamJobStatus status = job.getStatus();
        if (status == null || status.workers == null) {
            return null;
        }
        // A worker's line without a batch (one that has not reported yet) is null here, not an
        // exception in the informer's cache, which would drop that event and the change it shows.
        return status.workers.stream().filter(w -> w.name != null && w.name.endsWith("-0")).findFirst()
                .map(w -> w.batchId).orElse(null);
    }

    @Override
    public String getKey(StreamJob object) {
        return Cache.metaNamespaceKeyFunc(object);
    }

    @Override
    public StreamJob put(String key, StreamJob object) {
        keys.put(key, Boolean.TRUE);
        Awaited change = awaited.get(key);
        Long shown = workerBatch(object);
        if (change != null && shown != null && shown >= change.batchId() && awaited.remove(key, change)) {
            latencies.add(System.nanoTime() - change.changedAt());
        }
        return null;
    }

    @Override
    public StreamJob remove(String key) {
        keys.remove(key);
        return null;
    }

    @Override
    public Stream<String> keySet() {
        return keys.keySet().stream();
    }

    @Override
    public Stream<StreamJob> values() {
        return Stream.empty();
    }

    @Override
    public int size() {
        return keys.size();
    }

    @Override
    public StreamJob get(String key) {
        return null;
    }

    @Override
    public void close() {
        informer.stop();
    }
}
