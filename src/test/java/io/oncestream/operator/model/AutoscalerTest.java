package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.TestJobs;

/**
 * The autoscaler's policy, decision by decision on a clock the test moves: up after the lag has
 * stayed above target for the window, to what the arrivals need; not again within the
 * cool-down; not while the job is not Running; down only when one worker fewer would be
 * comfortably enough, for the down window; within the bounds and the partition count; no flapping.
 */
class AutoscalerTest {

    private static final Instant T0 = Instant.parse("2026-12-05T12:00:00Z");

    /** Up to 4 partitions; 200 records per 1 s trigger per worker: 200 records/s each at most. */
    private static final StreamJob JOB = TestJobs.job("""
              parallelism: 1
              trigger: {interval: 1s}
              autoscaling: {minParallelism: 1, maxParallelism: 8, targetLagSeconds: 10, scaleUpAfterSeconds: 20,
                scaleDownAfterSeconds: 60, cooldownSeconds: 30}
            """);

    private static final JobConfig CONFIG = withBatch(WorkerJobConfigs.from(JOB), 200);

    private StreamJobStatus status;
    private int running;

    @Test
    void upAfterTheWindowToWhatArrivalsNeedThenNotAgainWithinTheCooldown() {
        Autoscaler.Decision first = decide(T0);
        assertThat(first.parallelism()).as("starts at spec.parallelism").isEqualTo(1);
        assertThat(first.state().lastDecision).isEqualTo("starting with 1 workers");

        observe(Phase.Running, 30, 400, 5000);
        Autoscaler.Decision watching = decide(T0.plusSeconds(5));
        assertThat(watching.parallelism()).as("lag above target, window not over").isEqualTo(1);
        assertThat(watching.watching()).isTrue();
        assertThat(watching.state().lagAboveTargetSince).isEqualTo("2026-12-05T12:00:05Z");
        assertThat(watching.state().capacityPerWorker).as("5,000/s batches, but 200 per 1 s trigger").isEqualTo(200);

        Autoscaler.Decision up = decide(T0.plusSeconds(25));
        assertThat(up.parallelism()).as("ceil(400 / (200 x 0.7))").isEqualTo(3);
        assertThat(up.state().rescales).isEqualTo(1);
        assertThat(up.state().lastDecision).startsWith("1 -> 3 workers, up: lag 30 s (target 10 s), 400 records/s arriving,"
                + " 200 records/s per worker for 20 s");

        running = 3;
        observe(Phase.Running, 40, 1000, 15000);
        assertThat(decide(T0.plusSeconds(50)).parallelism()).as("within the cool-down: no rescale").isEqualTo(3);
        Autoscaler.Decision again = decide(T0.plusSeconds(70));
        assertThat(again.parallelism()).as("after it, the window held since 12:00:50 (20 s): up again").isEqualTo(8);
        assertThat(again.state().rescales).isEqualTo(2);
    }

    @Test
    void nothingIsDecidedForAJobThatIsNotRunningWithTheWorkersItChose() {
        decide(T0);
        observe(Phase.Degraded, 300, 400, 0); // Cassandra down: more workers would not help
        assertThat(decide(T0.plusSeconds(5)).state().lagAboveTargetSince).isNull();
        assertThat(decide(T0.plusSeconds(500)).parallelism()).isEqualTo(1);
        observe(Phase.Running, 300, 400, 5000);
        running = 2; // another shape still running (a rescale under way)
        assertThat(decide(T0.plusSeconds(600)).state().lagAboveTargetSince).isNull();
    }

    @Test
    void downOnlyWhenFewerWorkersAreComfortablyEnoughAndItDoesNotFlap() {
        startAt(4);
        // 300/s arriving, 4 workers of 200/s: 3 would be 300 / 600 = 50 % busy, under 0.8 x 70 %.
        observe(Phase.Running, 1, 300, 800);
        Autoscaler.Decision watching = decide(T0.plusSeconds(10));
        assertThat(watching.state().fewerWouldDoSince).isEqualTo("2026-12-05T12:00:10Z");
        assertThat(decide(T0.plusSeconds(40)).parallelism()).as("window of 60 s not over").isEqualTo(4);
        Autoscaler.Decision down = decide(T0.plusSeconds(70));
        assertThat(down.parallelism()).as("ceil(300 / 140) = 3").isEqualTo(3);
        assertThat(down.state().lastDecision).contains("down: lag 1 s").endsWith("3 workers stay under 70 % busy");

        running = 3;
        // 3 workers at 300/s: 2 would be 75 % busy, above 56 %: stays, and no up either (lag low).
        observe(Phase.Running, 2, 300, 600);
        for (int s = 100; s <= 1000; s += 30) {
            Autoscaler.Decision d = decide(T0.plusSeconds(s));
            assertThat(d.parallelism()).as("at +%d s", s).isEqualTo(3);
            assertThat(d.state().fewerWouldDoSince).isNull();
        }
        // Nothing arrives any more: down to minParallelism.
        observe(Phase.Running, 0, 0, 600);
        decide(T0.plusSeconds(1100));
        assertThat(decide(T0.plusSeconds(1160)).parallelism()).isEqualTo(1);
    }

    @Test
    void neverAboveThePartitionCountNorOutsideTheBounds() {
        decide(T0);
        observe(Phase.Running, 100, 100_000, 5000);
        status.partitionLag = Map.of("orders", Map.of("0", 5000L, "1", 5000L));
        decide(T0.plusSeconds(1));
        Autoscaler.Decision up = decide(T0.plusSeconds(30));
        assertThat(up.parallelism()).as("2 partitions").isEqualTo(2);
        running = 2;
        observe(Phase.Running, 100, 100_000, 5000);
        status.partitionLag = Map.of("orders", Map.of("0", 5000L, "1", 5000L));
        decide(T0.plusSeconds(100));
        Autoscaler.Decision stays = decide(T0.plusSeconds(130));
        assertThat(stays.parallelism()).isEqualTo(2);
        assertThat(stays.state().lastDecision).startsWith("stays at 2 workers, the most it may have");
    }

    /**
     * A lag whose age is not known for a moment (a new worker's first probe: status.lagSeconds
     * absent) says neither that the job caught up nor that it fell further behind: the window
     * that had started goes on, and nothing is decided on it.
     */
    @Test
    void aLagNotKnownForAMomentNeitherEndsNorStartsAWindow() {
        decide(T0);
        observe(Phase.Running, 30, 400, 5000);
        assertThat(decide(T0.plusSeconds(5)).state().lagAboveTargetSince).isEqualTo("2026-12-05T12:00:05Z");
        observe(Phase.Running, null, 400, 5000);
        Autoscaler.Decision unknown = decide(T0.plusSeconds(25));
        assertThat(unknown.parallelism()).as("no decision on an unknown lag, though the window is over").isEqualTo(1);
        assertThat(unknown.state().lagAboveTargetSince).as("the window goes on").isEqualTo("2026-12-05T12:00:05Z");
        observe(Phase.Running, 31, 400, 5000);
        assertThat(decide(T0.plusSeconds(26)).parallelism()).as("known again, above target since 12:00:05").isEqualTo(3);

        running = 3;
        observe(Phase.Running, 1, 100, 3000);
        assertThat(decide(T0.plusSeconds(60)).state().fewerWouldDoSince).isEqualTo("2026-12-05T12:01:00Z");
        observe(Phase.Running, null, 100, 3000);
        assertThat(decide(T0.plusSeconds(90)).state().fewerWouldDoSince).as("the down window goes on too")
                .isEqualTo("2026-12-05T12:01:00Z");
    }

    @Test
    void aChangeOfSpecParallelismSetsTheNumberOfWorkers() {
        startAt(4);
        JOB.getSpec().parallelism = 2;
        try {
            Autoscaler.Decision d = decide(T0.plusSeconds(5));
            assertThat(d.parallelism()).isEqualTo(2);
            assertThat(d.state().lastDecision).isEqualTo("spec.parallelism is 2: 2 workers");
        } finally {
            JOB.getSpec().parallelism = 1;
        }
    }

    private void startAt(int workers) {
        JOB.getSpec().parallelism = workers;
        decide(T0);
        JOB.getSpec().parallelism = 1;
        status.autoscaler.specParallelism = 1;
        running = workers;
    }

    private Autoscaler.Decision decide(Instant now) {
        Autoscaler.Decision d = Autoscaler.decide(JOB.getSpec(), status, status == null ? null : running, CONFIG, now);
        StreamJobStatus next = status == null ? new StreamJobStatus() : status;
        next.autoscaler = d.state();
        status = next;
        if (running == 0) {
            running = d.parallelism();
        }
        return d;
    }

    /** The job's next status: its phase, lag, arrivals and its workers' summed batch speed. */
    private void observe(Phase phase, long lagSeconds, long arriving, long batchSpeed) {
        observe(phase, Long.valueOf(lagSeconds), arriving, batchSpeed);
    }

    /** As above, with {@code lagSeconds} null: its age not known. */
    private void observe(Phase phase, Long lagSeconds, long arriving, long batchSpeed) {
        StreamJobStatus s = new StreamJobStatus();
        s.phase = phase;
        s.lagSeconds = lagSeconds;
        s.rates = new StreamJobStatus.Rates();
        s.rates.incomingRecordsPerSecond = arriving;
        s.rates.batchRecordsPerSecond = batchSpeed;
        s.autoscaler = status.autoscaler;
        status = s;
    }

    private static JobConfig withBatch(JobConfig c, int maxRecords) {
        JobConfig.KafkaSource s = c.source();
        return new JobConfig(c.jobId(), new JobConfig.KafkaSource(s.bootstrapServers(), s.topics(), s.startingOffsets(), maxRecords,
                s.failOnDataLoss(), s.groupId(), s.properties()), c.format(), c.filter(), c.tombstones(), c.sink(), c.deadLetter(),
                c.trigger(), c.checkpoint(), c.parallelism(), c.restart());
    }
}
