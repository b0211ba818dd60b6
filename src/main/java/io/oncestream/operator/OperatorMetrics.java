package io.oncestream.operator;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

import jakarta.inject.Singleton;

import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.StatusProjection;

/**
 * The operator's own Prometheus metrics on {@code /q/metrics}: reconciliations, status
 * patches, progress polls and StreamJobs per phase.
 */
@Singleton
public class OperatorMetrics {

    private final Counter reconciliations;
    private final Counter statusPatches;
    private final Counter pollsAnswered;
    private final Counter pollsFailed;
    private final Counter refusals;
    private final AtomicReference<IndexedResourceCache<StreamJob>> jobs = new AtomicReference<>();
    private final AtomicReference<IntSupplier> reconciledJobs = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> polledJobs = new AtomicReference<>(() -> 0);

    public OperatorMetrics(MeterRegistry registry) {
        reconciliations = Counter.builder("oncestream_operator_reconciliations").description("StreamJob reconciliations run")
                .register(registry);
        statusPatches = Counter.builder("oncestream_operator_status_patches")
                .description("StreamJob status patches (only sent when the projected status changed)").register(registry);
        pollsAnswered = Counter.builder("oncestream_operator_progress_polls").tag("result", "answered")
                .description("GET /progress calls to workers").register(registry);
        pollsFailed = Counter.builder("oncestream_operator_progress_polls").tag("result", "failed")
                .description("GET /progress calls to workers").register(registry);
        refusals = Counter.builder("oncestream_operator_refused_changes")
                .description("Reconciliations that refused a spec change the checkpoints cannot follow").register(registry);
        Gauge.builder("oncestream_operator_streamjobs_reconciled", reconciledJobs, r -> r.get().getAsInt())
                .description("StreamJobs reconciled at least once since this operator started (all of them once it has caught up)")
                .register(registry);
        Gauge.builder("oncestream_operator_polled_streamjobs", polledJobs, r -> r.get().getAsInt())
                .description("StreamJobs whose workers are polled every poll interval (some worker pod has an address)")
                .register(registry);
        for (Phase phase : Phase.values()) {
            Gauge.builder("oncestream_operator_streamjobs", jobs, cache -> count(cache.get(), phase))
                    .tag("phase", phase.name()).description("StreamJobs by phase (from the operator's cache)").register(registry);
        }
    }

    private static double count(IndexedResourceCache<StreamJob> cache, Phase phase) {
        return cache == null ? 0 : cache.list().filter(j -> j.getStatus() != null && j.getStatus().phase == phase).count();
    }

    /** The SDK's cache of StreamJobs, which the per-phase gauge counts. */
    void watch(IndexedResourceCache<StreamJob> cache) {
        jobs.compareAndSet(null, cache);
    }

    /** The number of distinct existing StreamJobs reconciled since start, which the gauge reports. */
    void countReconciledJobs(IntSupplier count) {
        reconciledJobs.set(count);
    }

    /** The number of jobs whose workers are polled, which the gauge reports. */
    void countPolledJobs(IntSupplier count) {
        polledJobs.set(count);
    }

    void reconciled(boolean patched, boolean refused) {
        reconciliations.increment();
        if (patched) {
            statusPatches.increment();
        }
        if (refused) {
            refusals.increment();
        }
    }

    /** One poll of a job: the workers with an address were asked; those with a document answered. */
    void polled(List<WorkerPods.Expected> expected, List<StatusProjection.Worker> workers) {
        long asked = expected.stream().filter(e -> e.pollAddress() != null).count();
        long answered = workers.stream().filter(w -> w.progress() != null).count();
        pollsAnswered.increment(answered);
        pollsFailed.increment(asked - answered);
    }
}
