package io.oncestream.operator;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;

/**
 * What each job's series cost the operator, side by side in one process: the operator's
 * {@link OperatorMetrics} (the series written by {@link JobSeries} when scraped) against the
 * same series as Micrometer meters, a {@link MultiGauge} row per job and series (how the
 * operator held them before). For N jobs it prints, per way, the median CPU time of a scrape
 * of the Prometheus page (the thread's own CPU, the page's text included), the page's size,
 * and the heap the series hold per job (used heap after full collections, with and without
 * them), then the ratios. Run by {@code deploy/local/operator-benchmark.sh --job-series N};
 * in this package to reach the operator's package-private metrics.
 */
public final class JobSeriesBenchmark {

    private static final int ROUNDS = 7;

    public static void main(String[] args) throws Exception {
        int jobs = Integer.parseInt(args[0]);
        say("%,d jobs, %d scrapes each way, alternating", jobs, ROUNDS);
        long bare = usedAfterGc();
        PrometheusMeterRegistry now = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        OperatorMetrics metrics = new OperatorMetrics(now, now.getPrometheusRegistry());
        for (int i = 0; i < jobs; i++) {
            metrics.job(id(i), status(i), i % 3);
        }
        long withSeries = usedAfterGc();
        PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        asMeters(meters, jobs);
        long withMeters = usedAfterGc();
        double seriesBytes = (withSeries - bare) / (double) jobs;
        double meterBytes = (withMeters - withSeries) / (double) jobs;

        long[] seriesCpu = new long[ROUNDS];
        long[] meterCpu = new long[ROUNDS];
        int seriesSize = 0;
        int meterSize = 0;
        for (int round = 0; round < ROUNDS; round++) {
            seriesSize = scrape(now, seriesCpu, round);
            meterSize = scrape(meters, meterCpu, round);
        }
        double series = median(seriesCpu) / 1e6;
        double meter = median(meterCpu) / 1e6;
        say("per-job series written when scraped (this build): scrape %.0f ms CPU (median), page %,d bytes; heap %,.0f bytes per job"
                + " (the operator's figures of a job included)", series, seriesSize, seriesBytes);
        say("per-job series as Micrometer meters (before):     scrape %.0f ms CPU (median), page %,d bytes; heap %,.0f bytes per job"
                + " (its own copy of the figures included)", meter, meterSize, meterBytes);
        say("ratios, this build / before: scrape CPU %.2f, heap per job %.2f", series / meter, seriesBytes / meterBytes);
    }

    /** The same 17 series per job as a meter each: 10 {@link MultiGauge}s with a row per job, and the phase's row per job and phase. */
    private static void asMeters(PrometheusMeterRegistry registry, int jobs) {
        Map<String, StreamJobStatus> figures = new ConcurrentHashMap<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            figures.put(id(i), status(i));
            ids.add(id(i));
        }
        for (String name : List.of("oncestream_job_lag_records", "oncestream_job_lag_seconds", "oncestream_job_incoming_records_per_second",
                "oncestream_job_input_records_per_second", "oncestream_job_batch_records_per_second", "oncestream_job_sink_available",
                "oncestream_job_source_available", "oncestream_job_workers", "oncestream_job_workers_ready",
                "oncestream_job_worker_restarts")) {
            MultiGauge.builder(name).description("a per-job series").register(registry).register(ids.stream()
                    .map(id -> MultiGauge.Row.of(Tags.of("job_id", id), figures, (Map<String, StreamJobStatus> m) -> {
                        StreamJobStatus s = m.get(id);
                        return s == null || s.lag == null ? Double.NaN : s.lag;
                    })).collect(java.util.stream.Collectors.toList()), true);
        }
        List<MultiGauge.Row<?>> phases = new ArrayList<>();
        for (String id : ids) {
            for (Phase phase : Phase.values()) {
                phases.add(MultiGauge.Row.of(Tags.of("job_id", id, "phase", phase.name()), figures, (Map<String, StreamJobStatus> m) -> {
                    StreamJobStatus s = m.get(id);
                    return s == null ? Double.NaN : s.phase == phase ? 1 : 0;
                }));
            }
        }
        MultiGauge.builder("oncestream_job_phase").description("1 for the job's current phase").register(registry).register(phases, true);
    }

    private static int scrape(PrometheusMeterRegistry registry, long[] cpu, int round) {
        var thread = ManagementFactory.getThreadMXBean();
        long before = thread.getCurrentThreadCpuTime();
        String page = registry.scrape();
        cpu[round] = thread.getCurrentThreadCpuTime() - before;
        return page.length();
    }

    private static String id(int i) {
        return String.format(Locale.ROOT, "ns-%d/job-%05d", i % 10, i);
    }

    private static StreamJobStatus status(int i) {
        StreamJobStatus s = new StreamJobStatus();
        s.phase = Phase.values()[i % Phase.values().length];
        s.lag = (long) i;
        s.lagSeconds = (long) (i % 60);
        s.replicas = 1;
        return s;
    }

    private static long usedAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed();
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static void say(String format, Object... args) {
        System.out.println("[job-series] " + String.format(Locale.ROOT, format, args));
    }
}
