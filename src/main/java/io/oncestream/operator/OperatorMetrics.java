package io.oncestream.operator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.CollectorRegistry;

import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.operator.progress.ProgressChain;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.StatusProjection;

/**
 * The operator's Prometheus metrics on {@code /q/metrics}: its own (reconciliations and their
 * duration and failures, status patches, progress polls, StreamJobs per phase) and each job's
 * as its status says it ({@code oncestream_job_*{job_id="namespace/name"}}: lag, rates, phase,
 * sink and source, workers, worker restarts), the signals to alert on or to drive an
 * autoscaler with. docs/metrics.md lists them all.
 */
@Singleton
public class OperatorMetrics {

    private final Counter reconciliations;
    private final Counter statusPatches;
    private final Counter pollsAnswered;
    private final Counter pollsFailed;
    private final Counter pollsNotModified;
    private final Counter pollsRetried;
    private final Counter refusals;
    /** The SDK's cache of StreamJobs, given when the event sources are prepared. */
    private final AtomicReference<IndexedResourceCache<StreamJob>> primaryCache = new AtomicReference<>();
    /**
     * That cache once this replica has begun to reconcile, which the per-phase gauge counts: a
     * standby's cache is filled too (the SDK starts the informers of every replica), but a
     * standby reconciles nothing and reports no jobs by phase.
     */
    private final AtomicReference<IndexedResourceCache<StreamJob>> jobs = new AtomicReference<>();
    private final AtomicReference<IntSupplier> reconciledJobs = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> polledJobs = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> pendingJobs = new AtomicReference<>(() -> 0);
    private final Counter reconcileErrors;
    private final Timer reconcileDuration;
    /** Per job ({@code namespace/name}): its last projected status and its worker containers' restarts. */
    private final Map<String, JobSeries.Figures> jobFigures = new ConcurrentHashMap<>();
    private final List<JobSeries.Family> jobFamilies = new ArrayList<>();

    /**
     * The operator's metrics in Quarkus' registry, each job's series in the Prometheus registry's
     * own (there is one whenever {@code /q/metrics} is served).
     */
    @Inject
    public OperatorMetrics(MeterRegistry registry, Instance<PrometheusMeterRegistry> prometheus) {
        this(registry, prometheus.isResolvable() ? prometheus.get().getPrometheusRegistry() : null);
    }

    /** Without each job's series (they are only for Prometheus). */
    OperatorMetrics(MeterRegistry registry) {
        this(registry, (CollectorRegistry) null);
    }

    /** Each job's series written to {@code jobSeries}; none if it is null. */
    OperatorMetrics(MeterRegistry registry, CollectorRegistry jobSeries) {
        reconciliations = Counter.builder("oncestream_operator_reconciliations").description("StreamJob reconciliations run")
                .register(registry);
        statusPatches = Counter.builder("oncestream_operator_status_patches")
                .description("StreamJob status patches (only sent when the projected status changed)").register(registry);
        pollsAnswered = Counter.builder("oncestream_operator_progress_polls").tag("result", "answered")
                .description("GET /progress calls to workers").register(registry);
        pollsFailed = Counter.builder("oncestream_operator_progress_polls").tag("result", "failed")
                .description("GET /progress calls to workers").register(registry);
        pollsNotModified = Counter.builder("oncestream_operator_progress_polls").tag("result", "not_modified")
                .description("GET /progress calls to workers").register(registry);
        pollsRetried = Counter.builder("oncestream_operator_progress_polls").tag("result", "retried")
                .description("GET /progress calls to workers").register(registry);
        refusals = Counter.builder("oncestream_operator_refused_changes")
                .description("Reconciliations that refused a spec change the checkpoints cannot follow").register(registry);
        Gauge.builder("oncestream_operator_streamjobs_reconciled", reconciledJobs, r -> r.get().getAsInt())
                .description("StreamJobs reconciled at least once since this operator started (all of them once it has caught up)")
                .register(registry);
        Gauge.builder("oncestream_operator_polled_streamjobs", polledJobs, r -> r.get().getAsInt())
                .description("StreamJobs whose workers are polled (some worker pod has an address)")
                .register(registry);
        Gauge.builder("oncestream_operator_pending_reconciles", pendingJobs, r -> r.get().getAsInt())
                .description("StreamJobs whose workers' answers changed and whose reconcile has not run yet (the backlog)")
                .register(registry);
        for (Phase phase : Phase.values()) {
            Gauge.builder("oncestream_operator_streamjobs", jobs, cache -> count(cache.get(), phase))
                    .tag("phase", phase.name()).description("StreamJobs by phase (from the operator's cache)").register(registry);
        }
        reconcileErrors = Counter.builder("oncestream_operator_reconcile_errors")
                .description("Reconciliations that failed (the API server refused a write, say); each is retried").register(registry);
        reconcileDuration = Timer.builder("oncestream_operator_reconcile_duration").description("Time one reconciliation takes")
                .serviceLevelObjectives(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
                        Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5))
                .register(registry);
        jobGauge("oncestream_job_lag_records", "Records in Kafka the job has not committed yet (status.lag)",
                f -> number(f.status().lag));
        jobGauge("oncestream_job_lag_seconds", "Age of the oldest record the job has not committed (status.lagSeconds)",
                f -> number(f.status().lagSeconds));
        jobGauge("oncestream_job_incoming_records_per_second", "Records arriving in the job's topics per second,"
                + " over the last minute", f -> f.status().rates == null ? Double.NaN : number(f.status().rates.incomingRecordsPerSecond));
        jobGauge("oncestream_job_input_records_per_second", "Records the job reads per second, over the last minute",
                f -> f.status().rates == null ? Double.NaN : number(f.status().rates.inputRecordsPerSecond));
        jobGauge("oncestream_job_batch_records_per_second", "The workers' processing speed: records per second of"
                + " batch time in their last batches, summed (what the job could read with batches back to back)",
                f -> f.status().rates == null ? Double.NaN : number(f.status().rates.batchRecordsPerSecond));
        jobGauge("oncestream_job_sink_available", "1 while Cassandra acknowledges the job's writes, 0 while they"
                + " fail (absent before a worker reported)", f -> condition(f.status(), ConditionType.SinkAvailable));
        jobGauge("oncestream_job_source_available", "1 while Kafka answers the job's workers, 0 while it does not",
                f -> condition(f.status(), ConditionType.SourceAvailable));
        jobGauge("oncestream_job_workers", "Workers of the job's current shape (status.replicas)",
                f -> number(f.status().replicas));
        jobGauge("oncestream_job_workers_ready", "Worker pods of the job that are ready",
                f -> f.status().workers == null ? 0 : f.status().workers.stream().filter(w -> Boolean.TRUE.equals(w.ready)).count());
        jobGauge("oncestream_job_worker_restarts", "Container restarts of the job's current worker pods (goes down"
                + " when a pod is replaced)", f -> f.restarts());
        if (jobSeries != null) {
            new JobSeries(jobFigures, jobFamilies).register(jobSeries);
        }
        ScheduledExecutorService pruner = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "job-metrics-prune");
            t.setDaemon(true);
            return t;
        });
        pruner.scheduleWithFixedDelay(this::pruneDeletedJobs, 30, 30, TimeUnit.SECONDS);
    }

    private void jobGauge(String name, String help, ToDoubleFunction<JobSeries.Figures> value) {
        jobFamilies.add(new JobSeries.Family(name, help, value));
    }

    private static double number(Number n) {
        return n == null ? Double.NaN : n.doubleValue();
    }

    private static double condition(StreamJobStatus status, ConditionType type) {
        String value = status.condition(type).map(c -> c.status).orElse("Unknown");
        return "True".equals(value) ? 1 : "False".equals(value) ? 0 : Double.NaN;
    }

    /** After a reconcile: the job's status as projected and its worker containers' restarts. */
    void job(String jobId, StreamJobStatus status, long restarts) {
        jobFigures.put(jobId, new JobSeries.Figures(status, restarts));
    }

    /** Drops the series of jobs that were deleted (the SDK does not reconcile a deleted job). */
    private void pruneDeletedJobs() {
        IndexedResourceCache<StreamJob> cache = jobs.get();
        if (cache == null) {
            return;
        }
        java.util.Set<String> existing = cache.list().map(io.oncestream.api.StreamJobResources::jobId).collect(java.util.stream.Collectors.toSet());
        jobFigures.keySet().retainAll(existing);
    }

    /**
     * Runs one reconciliation and records how long it took, whether it returned or threw. From
     * the first one on, the per-phase gauge counts the jobs in the cache.
     */
    <T> T timed(Supplier<T> reconciliation) {
        jobs.compareAndSet(null, primaryCache.get());
        return reconcileDuration.record(reconciliation);
    }

    void reconcileFailed() {
        reconcileErrors.increment();
    }

    private static double count(IndexedResourceCache<StreamJob> cache, Phase phase) {
        return cache == null ? 0 : cache.list().filter(j -> j.getStatus() != null && j.getStatus().phase == phase).count();
    }

    /** The SDK's cache of StreamJobs, which the per-phase gauge counts once this replica reconciles; the first one given is kept. */
    void watch(IndexedResourceCache<StreamJob> cache) {
        primaryCache.compareAndSet(null, cache);
    }

    /** The number of distinct existing StreamJobs reconciled since start, which the gauge reports. */
    void countReconciledJobs(IntSupplier count) {
        reconciledJobs.set(count);
    }

    /** The number of jobs whose workers are polled, which the gauge reports. */
    void countPolledJobs(IntSupplier count) {
        polledJobs.set(count);
    }

    /** The number of jobs waiting for a reconcile their workers' changed answers asked for. */
    void countPendingJobs(IntSupplier count) {
        pendingJobs.set(count);
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

    /** One ask of a worker's chain (ProgressWatch): a document, a 304 (nothing changed), no answer, or a first time-out, asked again. */
    void asked(ProgressChain.Result result) {
        switch (result) {
            case ANSWERED -> pollsAnswered.increment();
            case NOT_MODIFIED -> pollsNotModified.increment();
            case FAILED -> pollsFailed.increment();
            case RETRIED -> pollsRetried.increment();
        }
    }

    /**
     * One poll of a job: the workers with an address and no {@code known} entry were asked
     * (the others' answers were the watch's); those with a document answered.
     */
    void polled(List<WorkerPods.Expected> expected, List<StatusProjection.Worker> known, List<StatusProjection.Worker> workers) {
        long asked = 0;
        long answered = 0;
        for (int i = 0; i < expected.size(); i++) {
            if (known.get(i) == null && expected.get(i).pollAddress() != null) {
                asked++;
                answered += workers.get(i).progress() != null ? 1 : 0;
            }
        }
        pollsAnswered.increment(answered);
        pollsFailed.increment(asked - answered);
    }
}
