package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;

/**
 * The autoscaler against a producer that speeds up and stops. Each worker reads at most 100
 * records a second (batches of 100, a 1 s trigger). At 50 records/s one worker keeps up and
 * nothing is rescaled; at 250 records/s it falls behind, and once the lag has stayed above its
 * 8 s target for the 10 s window the job goes up to ceil(250 / 70) = 4 workers (in one step or
 * more, since the arrival rate is a 60 s average that takes a minute to reach 250) and catches up;
 * when the producer stops it comes back down to 1 after the windows and cool-downs. The
 * number of workers only rises, then only falls (no flapping), two rescales are never closer
 * than the cool-down, the checkpoint volumes of the workers scaled away are deleted
 * ({@code checkpoint.whenScaled: Delete}), and the table is exact.
 */
class AutoscaleE2E extends E2ETest {

    private static final int COOLDOWN = 30;
    private final List<String> changes = new ArrayList<>();
    private final List<Instant> changedAt = new ArrayList<>();
    private final List<Integer> parallelisms = new ArrayList<>();
    /** Each change of phase, workers or lag (unknown, up to 4 s, above) the test saw, to show how a wait ended. */
    private final List<String> seen = new ArrayList<>();

    @Test
    void theJobScalesUpWhenItFallsBehindAndBackDownWhenTheProducerStops() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-autoscale", 4, 3000);
        job.apply(Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 100", "    whenDeleted: Retain\n",
                "    whenDeleted: Retain\n    whenScaled: Delete\n",
                "  parallelism: 2\n", "  parallelism: 1\n  autoscaling: {minParallelism: 1, maxParallelism: 4, targetLagSeconds: 8,"
                        + " scaleUpAfterSeconds: 10, scaleDownAfterSeconds: 20, cooldownSeconds: " + COOLDOWN + "}\n"));
        awaitStatus(job, "Running with 1 worker", E2ESettings.WAIT, s -> s.phase == Phase.Running && Integer.valueOf(1).equals(s.replicas));

        try (Producing slow = new Producing(job, 25, Duration.ofMillis(500))) {
            Instant until = Instant.now().plusSeconds(40);
            awaitStatus(job, "40 s at 50 records/s", Duration.ofSeconds(60), s -> Instant.now().isAfter(until));
            assertThat(job.status().autoscaler.rescales).as("one worker keeps up with 50 records/s").isNull();
        }
        Instant fast = Instant.now();
        try (Producing producing = new Producing(job, 50, Duration.ofMillis(200))) {
            StreamJobStatus up = awaitStatus(job, "scaled up and caught up", Duration.ofSeconds(300),
                    s -> s.phase == Phase.Running && s.replicas != null && s.replicas > 1 && s.lagSeconds != null && s.lagSeconds <= 4
                            && s.autoscaler != null && s.replicas.equals(s.autoscaler.parallelism));
            System.out.printf("[e2e] at 250 records/s: %s; %d workers, caught up %.0f s after the producer sped up; statuses seen: %s%n",
                    up.autoscaler.lastDecision, up.replicas, Duration.between(fast, Instant.now()).toMillis() / 1000.0, seen);
            assertThat(up.autoscaler.parallelism).as("ceil(250 / (100 x 0.7)), in one step or more: arrivals are a 60 s average;"
                    + " statuses seen: %s", seen).isEqualTo(4);
        }
        Instant stopped = Instant.now();
        StreamJobStatus down = awaitStatus(job, "back to 1 worker", Duration.ofSeconds(360),
                s -> s.phase == Phase.Running && s.autoscaler != null && Integer.valueOf(1).equals(s.autoscaler.parallelism)
                        && Integer.valueOf(1).equals(s.replicas));
        System.out.printf("[e2e] producer stopped: %s, %.0f s later; worker counts %s at %s%n", down.autoscaler.lastDecision,
                Duration.between(stopped, Instant.now()).toMillis() / 1000.0, parallelisms, changedAt);

        assertThat(parallelisms).as("the workers the autoscaler chose, in order").startsWith(1).contains(4).endsWith(1);
        int peak = parallelisms.indexOf(4);
        for (int i = 1; i < parallelisms.size(); i++) {
            boolean rising = i <= peak;
            if (rising) {
                assertThat(parallelisms.get(i)).as("only up, then only down: %s", parallelisms).isGreaterThan(parallelisms.get(i - 1));
            } else {
                assertThat(parallelisms.get(i)).as("only up, then only down: %s", parallelisms).isLessThan(parallelisms.get(i - 1));
            }
        }
        for (int i = 2; i < changedAt.size(); i++) {
            assertThat(Duration.between(changedAt.get(i - 1), changedAt.get(i)).toSeconds()).as("rescales %s", changes)
                    .isGreaterThanOrEqualTo(COOLDOWN - 2);
        }
        assertThat(down.autoscaler.rescales).isEqualTo(parallelisms.size() - 1);
        assertThat(job.events()).filteredOn(e -> e.startsWith("Normal Autoscaled")).hasSize(down.autoscaler.rescales);
        // checkpoint.whenScaled: Delete: the volumes of the workers scaled away go with them.
        io.oncestream.testing.Awaits.until(E2ESettings.WAIT, "the claims of workers 1-3 deleted", () -> kube.admin()
                .persistentVolumeClaims().inNamespace(job.namespace).list().getItems().stream()
                .filter(c -> c.getMetadata().getDeletionTimestamp() == null).count() == 1);
        job.awaitExactTable(E2ESettings.WAIT);
    }

    /** Awaits a status, recording every change of the autoscaler's choice on the way. */
    private StreamJobStatus awaitStatus(E2EJob job, String what, Duration timeout, Predicate<StreamJobStatus> condition) {
        return job.awaitStatus(what, timeout, s -> {
            String line = s.phase + ", " + s.replicas + " workers, lag " + (s.lagSeconds == null ? "unknown"
                    : s.lagSeconds <= 4 ? "<= 4 s" : "> 4 s");
            if (seen.isEmpty() || !seen.get(seen.size() - 1).contains(line)) {
                seen.add(java.time.LocalTime.now().withNano(0) + " " + line + " (" + s.lagSeconds + " s, " + s.lag + " records)");
            }
            if (s.autoscaler != null && s.autoscaler.parallelism != null
                    && (parallelisms.isEmpty() || !parallelisms.get(parallelisms.size() - 1).equals(s.autoscaler.parallelism))) {
                parallelisms.add(s.autoscaler.parallelism);
                changedAt.add(s.autoscaler.lastScaleTime == null ? Instant.now() : Instant.parse(s.autoscaler.lastScaleTime));
                changes.add(s.autoscaler.lastDecision);
            }
            return condition.test(s);
        });
    }
}
