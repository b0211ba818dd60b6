package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.Command;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.PrometheusExtension;
import io.oncestream.testing.PrometheusServer;

/**
 * Monitoring as a user installs it, checked by a real Prometheus (Debian's) that discovers the
 * operator's and the workers' pods by their prometheus.io annotations: it scrapes both, every
 * query of the shipped Grafana dashboard returns data for a running job, and the shipped alert
 * rules (rendered from the chart with short thresholds, so that the test does not wait
 * minutes) fire when Cassandra stops — sink unavailable, lag growing while the sink is down,
 * job lagging — and resolve when it is back. The table ends exact.
 */
@ExtendWith(PrometheusExtension.class)
class MonitoringE2E extends E2ETest {

    private static final Duration ALERT_WAIT = Duration.ofSeconds(150);
    private static final List<String> OUTAGE_ALERTS = List.of("OncestreamSinkUnavailable", "OncestreamLagGrowingWhileSinkDown",
            "OncestreamJobLagging");

    private static PrometheusServer prometheus;

    @BeforeAll
    static void prometheus(PrometheusServer server) {
        prometheus = server;
    }

    @Test
    void aRealPrometheusScrapesTheDashboardsQueriesAndTheAlertsFireAndResolve() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-monitor", 2, 2000);
        String id = job.namespace + "/" + job.name;
        job.produce(1000);
        job.apply(java.util.Map.of());
        job.awaitStatus("Running", E2ESettings.WAIT, s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);

        Path rules = LocalService.repoDir().resolve("target/e2e-oncestream-alerts.yaml");
        Command.Result render = Command.of("bash", LocalService.repoDir().resolve("deploy/monitoring/render.sh").toString(),
                rules.toString(), "--set", "metrics.prometheusRule.lagSeconds=10", "--set", "metrics.prometheusRule.lagFor=10s",
                "--set", "metrics.prometheusRule.unavailableFor=10s", "--set", "metrics.prometheusRule.degradedFor=10s")
                .run(Duration.ofMinutes(2));
        assertThat(render.exitCode()).as(render.stderr()).isZero();
        prometheus.loadRules("oncestream-e2e", Files.readString(rules));

        try (Producing producing = new Producing(job, 50, Duration.ofMillis(250))) {
            // Scraped by pod discovery: both workers and the operator's series of this job.
            Awaits.until(E2ESettings.WAIT, "Prometheus scrapes both workers and the operator", () ->
                    prometheus.query("oncestream_batch_id{job_id=\"" + id + "\"}").size() == 2
                            && !prometheus.query("oncestream_job_phase{job_id=\"" + id + "\",phase=\"Running\"} == 1").isEmpty());
            // Rates and histograms need a minute of samples.
            Thread.sleep(65_000); // a window, not a synchronization: the rate windows fill, and a wrong alert (for: 10s) would fire
            List<String> empty = new ArrayList<>();
            List<String> queries = dashboardQueries();
            for (String query : queries) {
                String concrete = query.replace("$job_id", id).replace("$__rate_interval", "1m");
                if (prometheus.query(concrete).isEmpty()) {
                    empty.add(concrete);
                }
            }
            System.out.printf("[e2e] %d dashboard queries run against Prometheus, %d without data%n", queries.size(), empty.size());
            assertThat(empty).as("dashboard queries without data for a running job").isEmpty();
            assertThat(firing(id)).as("a healthy job raises none of the outage alerts").isEmpty();

            long stopping = System.nanoTime();
            cassandra.stop();
            try {
                Awaits.until(ALERT_WAIT, "the sink and lag alerts firing", () -> firing(id).containsAll(OUTAGE_ALERTS));
                System.out.printf("[e2e] %s firing %.0f s after Cassandra's stop began%n", OUTAGE_ALERTS,
                        (System.nanoTime() - stopping) / 1e9);
            } finally {
                cassandra.start();
            }
            long started = System.nanoTime();
            Awaits.until(E2ESettings.WAIT, "the alerts resolved", () -> firing(id).isEmpty());
            System.out.printf("[e2e] resolved %.0f s after Cassandra was back%n", (System.nanoTime() - started) / 1e9);
        } finally {
            prometheus.removeRules("oncestream-e2e");
        }
        job.awaitExactTable(E2ESettings.WAIT);
    }

    /** The outage alerts firing for the job (pending ones not counted). */
    private static List<String> firing(String id) {
        List<String> out = new ArrayList<>();
        for (String alert : prometheus.alerts()) {
            String[] parts = alert.split(" ", 3);
            if (OUTAGE_ALERTS.contains(parts[0]) && "firing".equals(parts[1]) && parts[2].contains("\"job_id\":\"" + id + "\"")) {
                out.add(parts[0]);
            }
        }
        return out;
    }

    /** Every PromQL expression of the shipped dashboard. */
    private static List<String> dashboardQueries() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(LocalService.repoDir()
                .resolve("helm/oncestream/files/oncestream-dashboard.json").toFile());
        List<String> out = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                out.add(target.path("expr").asText());
            }
        }
        assertThat(out).as("queries in the dashboard").hasSizeGreaterThan(15);
        return out;
    }
}
