package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.CollectorRegistry;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;

/**
 * The reconcile timer and the per-phase gauge, as the reconciler wires them: the cache is handed
 * over when the event sources are prepared, and counted once this replica reconciles (a standby,
 * whose informers run too, reports no jobs by phase). And each job's series on the Prometheus
 * page.
 */
class OperatorMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final OperatorMetrics metrics = new OperatorMetrics(registry);

    @Test
    void thePhaseGaugeCountsTheCacheOnlyOnceThisReplicaReconciles() {
        metrics.watch(new ListCache(List.of(job("a", StreamJobStatus.Phase.Running), job("b", StreamJobStatus.Phase.Running),
                job("c", StreamJobStatus.Phase.Pending))));
        assertThat(jobsIn(StreamJobStatus.Phase.Running)).as("a standby, which has not reconciled").isZero();

        metrics.timed(() -> null);

        assertThat(jobsIn(StreamJobStatus.Phase.Running)).isEqualTo(2);
        assertThat(jobsIn(StreamJobStatus.Phase.Pending)).isEqualTo(1);
    }

    @Test
    void aReconcileIsTimedWhetherItReturnsOrThrows() {
        assertThat(metrics.timed(() -> "done")).isEqualTo("done");
        assertThatThrownBy(() -> metrics.timed(() -> {
            throw new IllegalStateException("refused");
        })).hasMessage("refused");

        assertThat(registry.get("oncestream_operator_reconcile_duration").timer().count()).isEqualTo(2);
    }

    @Test
    void eachJobsSeriesAreOnThePrometheusPageAsItsStatusSaysThem() {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        OperatorMetrics withSeries = new OperatorMetrics(prometheus, prometheus.getPrometheusRegistry());
        StreamJobStatus running = job("a", StreamJobStatus.Phase.Running).getStatus();
        running.lag = 12L;
        running.replicas = 3;
        StreamJobStatus degraded = job("b", StreamJobStatus.Phase.Degraded).getStatus();
        withSeries.job("shop/a", running, 2);
        withSeries.job("shop/b", degraded, 0);
        withSeries.job("shop/a", running, 4); // a later reconcile of the same job replaces its figures

        CollectorRegistry page = prometheus.getPrometheusRegistry();
        assertThat(page.getSampleValue("oncestream_job_lag_records", JOB, new String[] {"shop/a"})).isEqualTo(12.0);
        assertThat(page.getSampleValue("oncestream_job_lag_records", JOB, new String[] {"shop/b"})).as("not known yet").isNaN();
        assertThat(page.getSampleValue("oncestream_job_workers", JOB, new String[] {"shop/a"})).isEqualTo(3.0);
        assertThat(page.getSampleValue("oncestream_job_worker_restarts", JOB, new String[] {"shop/a"})).isEqualTo(4.0);
        assertThat(page.getSampleValue("oncestream_job_source_available", JOB, new String[] {"shop/a"})).as("no worker reported").isNaN();
        for (StreamJobStatus.Phase phase : StreamJobStatus.Phase.values()) {
            assertThat(page.getSampleValue("oncestream_job_phase", JOB_AND_PHASE, new String[] {"shop/b", phase.name()}))
                    .as(phase.name()).isEqualTo(phase == StreamJobStatus.Phase.Degraded ? 1.0 : 0.0);
        }
        String scraped = prometheus.scrape();
        assertThat(scraped).contains("# TYPE oncestream_job_phase gauge", "# HELP oncestream_job_lag_seconds ",
                "oncestream_job_phase{job_id=\"shop/a\",phase=\"Running\",} 1.0");
        assertThat(scraped.lines().filter(l -> l.startsWith("oncestream_job_")))
                .as("10 series per job and one per job and phase").hasSize(2 * (10 + StreamJobStatus.Phase.values().length));
        assertThat(prometheus.getMeters()).as("no Micrometer meter per job").noneMatch(m -> m.getId().getName().startsWith("oncestream_job_"));
    }

    private static final String[] JOB = {"job_id"};
    private static final String[] JOB_AND_PHASE = {"job_id", "phase"};

    private double jobsIn(StreamJobStatus.Phase phase) {
        return registry.get("oncestream_operator_streamjobs").tag("phase", phase.name()).gauge().value();
    }

    private static StreamJob job(String name, StreamJobStatus.Phase phase) {
        StreamJob job = new StreamJob();
        job.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("shop").build());
        job.setStatus(new StreamJobStatus());
        job.getStatus().phase = phase;
        return job;
    }

    /** The SDK's primary cache, over a fixed list. */
    private record ListCache(List<StreamJob> jobs) implements IndexedResourceCache<StreamJob> {

        @Override
        public Optional<StreamJob> get(ResourceID id) {
            return jobs.stream().filter(j -> ResourceID.fromResource(j).equals(id)).findFirst();
        }

        @Override
        public Stream<ResourceID> keys() {
            return jobs.stream().map(ResourceID::fromResource);
        }

        @Override
        public Stream<StreamJob> list(Predicate<StreamJob> predicate) {
            return jobs.stream().filter(predicate);
        }

        @Override
        public Stream<StreamJob> list(String namespace, Predicate<StreamJob> predicate) {
            return list(predicate.and(j -> namespace.equals(j.getMetadata().getNamespace())));
        }

        @Override
        public List<StreamJob> byIndex(String indexName, String indexKey) {
            return List.of();
        }
    }
}
