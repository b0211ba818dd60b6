package io.oncestream.e2e;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.oncestream.api.StreamJob;
import io.oncestream.testing.Awaits;

/**
 * What the admission webhook costs a {@code kubectl apply}, measured on the chart-installed
 * operator through the real API server: server-side dry-run creates of a valid and an invalid
 * StreamJob (alternately), in rounds with the webhook on and off (its namespaceSelector
 * excluding the namespace), side by side in one run. Prints, per round, the client's p50/p99/max
 * per create, the webhook's own p50/p99 (the bucket bounds of the operator's
 * {@code admission_review_duration} histogram, counted per round) and the share of calls the API server's own histogram
 * ({@code apiserver_admission_webhook_admission_duration_seconds}) puts at ≤ 5 ms and ≤ 25 ms.
 * A benchmark, not a test: it asserts only that each answer is the right one. Run it with
 * {@code deploy/local/test.sh -Dit.test=AdmissionBenchmark} ({@code -Doncestream.bench.reviews=1000},
 * {@code -Doncestream.bench.rounds=4}).
 */
class AdmissionBenchmark extends E2ETest {

    private static final String WEBHOOK = "validate.streamjobs.oncestream.io";

    @Test
    void webhookLatency() throws Exception {
        int reviews = Integer.getInteger("oncestream.bench.reviews", 1000);
        int rounds = Integer.getInteger("oncestream.bench.rounds", 4);
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "bench-admission", 1, 10);
        StreamJob valid = job(job.manifest(Map.of()), job.namespace);
        StreamJob invalid = job(job.manifest(Map.of("value.amount > 100.0", "valu.amount > 100.0")), job.namespace);

        creates(valid, invalid, 200, true); // warm-up: JIT of the webhook and the API server's connections
        List<String> table = new ArrayList<>();
        List<double[]> on = new ArrayList<>();
        List<double[]> off = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            long[] before = apiServerBuckets();
            java.util.TreeMap<Double, Long> ownBefore = operatorBuckets();
            double[] with = creates(valid, invalid, reviews / rounds, true);
            long[] after = apiServerBuckets();
            java.util.TreeMap<Double, Long> ownAfter = operatorBuckets();
            double[] server = {bound(ownBefore, ownAfter, 0.5), bound(ownBefore, ownAfter, 0.99)};
            exclude(job.namespace, invalid, true);
            double[] without = creates(valid, invalid, reviews / rounds, false);
            exclude(job.namespace, invalid, false);
            on.add(with);
            off.add(without);
            long calls = after[2] - before[2];
            table.add(String.format("| %d | %d | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.1f / %.1f | ≤ %.0f / ≤ %.0f | %.0f %% / %.0f %% |",
                    round, reviews / rounds, with[0], with[1], with[2], without[0], without[1], without[2],
                    with[0] - without[0], with[1] - without[1], server[0], server[1],
                    100.0 * (after[0] - before[0]) / calls, 100.0 * (after[1] - before[1]) / calls));
        }
        System.out.println("[bench] admission webhook: " + reviews + " server-side dry-run creates with it (half refused) and "
                + reviews + " without, in " + rounds + " rounds");
        System.out.println("| round | creates each way | with webhook p50 / p99 / max (ms) | without p50 / p99 / max (ms) "
                + "| added p50 / p99 (ms) | webhook's own p50 / p99 (ms, bucket bound) | API server: calls ≤ 5 ms / ≤ 25 ms |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- |");
        table.forEach(System.out::println);
    }

    private static StreamJob job(String yaml, String namespace) {
        StreamJob job = Serialization.unmarshal(yaml, StreamJob.class);
        job.getMetadata().setNamespace(namespace);
        return job;
    }

    /** {@code count} dry-run creates, valid and invalid by turns; p50, p99 and max in ms. */
    private static double[] creates(StreamJob valid, StreamJob invalid, int count, boolean webhook) {
        double[] ms = new double[count];
        for (int i = 0; i < count; i++) {
            StreamJob job = i % 2 == 0 ? valid : invalid;
            long start = System.nanoTime();
            try {
                kube.admin().resource(job).dryRun().create();
                if (webhook && job == invalid) {
                    throw new AssertionError("the webhook let an invalid job through");
                }
            } catch (KubernetesClientException e) {
                if (!(webhook && job == invalid && e.getCode() == 422 && e.getMessage().contains("spec.filter"))) {
                    throw e;
                }
            }
            ms[i] = (System.nanoTime() - start) / 1e6;
        }
        Arrays.sort(ms);
        return new double[] {ms[count / 2], ms[(int) Math.ceil(count * 0.99) - 1], ms[count - 1]};
    }

    /** Takes the namespace out of the webhook's scope (or puts it back), and waits until the API server acts on it. */
    private static void exclude(String namespace, StreamJob invalid, boolean excluded) {
        var configurations = kube.admin().admissionRegistration().v1().validatingWebhookConfigurations();
        String name = configurations.withLabel("app.kubernetes.io/instance", "e2e").list().getItems().get(0).getMetadata().getName();
        configurations.withName(name).edit(c -> {
            List<String> values = c.getWebhooks().get(0).getNamespaceSelector().getMatchExpressions().get(0).getValues();
            if (excluded) {
                values.add(namespace);
            } else {
                values.remove(namespace);
            }
            return c;
        });
        Awaits.until(Duration.ofSeconds(30), "the API server to " + (excluded ? "skip" : "call") + " the webhook",
                () -> refused(invalid) != excluded);
    }

    /** Whether a dry-run create of {@code job} is refused by the webhook. */
    private static boolean refused(StreamJob job) {
        try {
            kube.admin().resource(job).dryRun().create();
            return false;
        } catch (KubernetesClientException e) {
            return true;
        }
    }

    /** The API server's counts of this webhook's calls: ≤ 5 ms, ≤ 25 ms, all. */
    private static long[] apiServerBuckets() {
        String metrics = kube.admin().raw("/metrics");
        long[] counts = new long[3];
        Pattern line = Pattern.compile("^apiserver_admission_webhook_admission_duration_seconds_bucket\\{(.*)\\} ([0-9.e+]+)$",
                Pattern.MULTILINE);
        Matcher m = line.matcher(metrics);
        while (m.find()) {
            if (!m.group(1).contains("name=\"" + WEBHOOK + "\"")) {
                continue;
            }
            long n = (long) Double.parseDouble(m.group(2));
            if (m.group(1).contains("le=\"0.005\"")) {
                counts[0] += n;
            } else if (m.group(1).contains("le=\"0.025\"")) {
                counts[1] += n;
            } else if (m.group(1).contains("le=\"+Inf\"")) {
                counts[2] += n;
            }
        }
        return counts;
    }

    /** The operator's review-time histogram, both results summed: bucket bound (ms) → count. */
    private static java.util.TreeMap<Double, Long> operatorBuckets() throws Exception {
        String ip = operator.pod().getStatus().getPodIP();
        String body = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(HttpRequest.newBuilder(URI.create("http://" + ip + ":8080/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        java.util.TreeMap<Double, Long> buckets = new java.util.TreeMap<>();
        Matcher m = Pattern.compile("^oncestream_operator_admission_review_duration_seconds_bucket\\{(.*)\\} ([0-9.eE+-]+)$",
                Pattern.MULTILINE).matcher(body);
        while (m.find()) {
            String le = m.group(1).replaceAll(".*le=\"([^\"]+)\".*", "$1");
            double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le) * 1000;
            buckets.merge(bound, (long) Double.parseDouble(m.group(2)), Long::sum);
        }
        return buckets;
    }

    /** The smallest bucket bound (ms) under which a share {@code q} of the reviews between the two readings fell. */
    private static double bound(java.util.TreeMap<Double, Long> before, java.util.TreeMap<Double, Long> after, double q) {
        long total = after.lastEntry().getValue() - before.getOrDefault(after.lastKey(), 0L);
        for (Map.Entry<Double, Long> e : after.entrySet()) {
            if (e.getValue() - before.getOrDefault(e.getKey(), 0L) >= Math.ceil(q * total)) {
                return e.getKey();
            }
        }
        return Double.POSITIVE_INFINITY;
    }
}
