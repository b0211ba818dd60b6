package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;

/**
 * The world around a running StreamJob fails while records keep arriving: Cassandra stops for
 * 30 s (the job goes Degraded with SinkAvailable=False and comes back by itself; its lag keeps
 * growing meanwhile, in records and in seconds), Kafka stops for 20 s (Degraded with
 * SourceAvailable=False), every worker is gone for a while (the operator reads the lag from
 * Kafka itself, and it keeps growing), and the operator's JVM is killed with SIGKILL in its pod and the
 * kubelet restarts it (status resumes; it rewrites none of the job's objects). The table ends
 * exactly as the records say.
 */
class OutagesE2E extends E2ETest {

    private static final Duration OUTAGE = Duration.ofSeconds(30);
    private static final Duration KAFKA_OUTAGE = Duration.ofSeconds(40);

    /** No worker answers {@code /progress}: each is Unreachable or has no pod. */
    private static boolean noWorkerReports(StreamJobStatus s) {
        return s.workers != null && !s.workers.isEmpty()
                && s.workers.stream().allMatch(w -> "Unreachable".equals(w.state) || "NoPod".equals(w.state));
    }

    private static E2EJob job;

    @Test
    void aCassandraOutageAndAnOperatorCrashLoseNothing() throws Exception {
        job = E2EJob.own(kube, kafka, cassandra, "e2e-outage", 4, 3000);
        job.produce(1000);
        job.apply(java.util.Map.of());
        job.awaitStatus("Running", E2ESettings.WAIT, s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);
        assertThat(job.events()).as("a normal start: Pending, then Running, no Warning on the way")
                .anyMatch(e -> e.startsWith("Normal PhaseRunning")).noneMatch(e -> e.startsWith("Warning"));

        try (Producing producing = new Producing(job, 100, Duration.ofMillis(250))) {
            producing.awaitSent(1200, "before Cassandra stops");
            long stopping = System.nanoTime();
            cassandra.stop();
            long stopped = System.nanoTime();
            Instant stoppedWall = Instant.now();
            StreamJobStatus degraded = job.awaitStatus("Degraded with SinkAvailable=False during the outage", OUTAGE,
                    s -> s.phase == Phase.Degraded && s.condition(ConditionType.SinkAvailable).filter(c -> "False".equals(c.status)).isPresent());
            double seconds = (System.nanoTime() - stopping) / 1e9;
            System.out.printf("[e2e] Degraded seen %.1f s after Cassandra's stop began (%.1f operator polls; the stop itself"
                    + " took %.1f s): %s%n", seconds, seconds / E2ESettings.POLL.toSeconds(), (stopped - stopping) / 1e9,
                    degraded.condition(ConditionType.SinkAvailable).orElseThrow().message);
            // The lag a user alerts on grows while nothing can commit: in records and in age.
            StreamJobStatus first = job.awaitStatus("a lag with an age after the stop", OUTAGE,
                    s -> s.lag != null && s.lagSeconds != null && s.lagSeconds > 0);
            Instant firstSeen = Instant.now();
            StreamJobStatus grown = job.awaitStatus("the lag grown 10 s later", OUTAGE,
                    s -> Instant.now().isAfter(firstSeen.plusSeconds(10)) && s.lag != null && s.lag > first.lag);
            Instant asked = Instant.now();
            StreamJobStatus last = job.status();
            System.out.printf("[e2e] during the outage: lag %d records / %d s, then %d records / %d s (%d s after the stop)%n",
                    first.lag, first.lagSeconds, last.lag, last.lagSeconds, Duration.between(stoppedWall, asked).toSeconds());
            assertThat(last.lag).as("records keep arriving and none commits: the lag grows").isGreaterThanOrEqualTo(grown.lag);
            // The oldest record not committed arrived at the latest one producer tick after the stop
            // ended (nothing commits after that), so its age is at least the time since then, less
            // what the status can trail the workers by (a poll interval and a reconcile).
            long sinceStop = Duration.between(stoppedWall, asked).toSeconds();
            assertThat(last.lagSeconds).as("age of the oldest record not committed, %d s after the stop", sinceStop)
                    .isGreaterThanOrEqualTo(sinceStop - 10);
            assertThat(last.rates.inputRecordsPerSecond).as("records read per second over the last minute, as a whole number")
                    .isNotNull();
            long left = OUTAGE.toNanos() - (System.nanoTime() - stopping);
            if (left > 0) {
                Thread.sleep(left / 1_000_000); // the fault's duration, not a synchronization: Cassandra stays down for OUTAGE
            }
            cassandra.start();
            job.awaitStatus("Running again, by itself", E2ESettings.WAIT,
                    s -> s.phase == Phase.Running && s.condition(ConditionType.SinkAvailable).filter(c -> "True".equals(c.status)).isPresent());
            job.awaitStatus("caught up: the lag back to what one producer tick leaves", E2ESettings.WAIT,
                    s -> s.lagSeconds != null && s.lagSeconds < 10);
        }

        // Kafka stops: the job says so within a probe and a poll, and comes back by itself.
        job.produce(500);
        kafka.stop();
        try {
            StreamJobStatus noKafka = job.awaitStatus("Degraded with SourceAvailable=False while Kafka is down", KAFKA_OUTAGE,
                    s -> s.phase == Phase.Degraded && s.condition(ConditionType.SourceAvailable).filter(c -> "False".equals(c.status)).isPresent());
            System.out.println("[e2e] Kafka down: " + noKafka.condition(ConditionType.SourceAvailable).orElseThrow().message);
            Thread.sleep(KAFKA_OUTAGE.toMillis() / 2); // the fault's duration, not a synchronization: Kafka stays down a while
        } finally {
            kafka.start();
        }
        job.awaitStatus("Running again after Kafka came back", E2ESettings.WAIT,
                s -> s.phase == Phase.Running && s.condition(ConditionType.SourceAvailable).filter(c -> "True".equals(c.status)).isPresent());

        try (Producing producing = new Producing(job, 100, Duration.ofMillis(250))) {
            // Every worker gone: the node cordoned, the worker pods deleted, their successors left
            // Pending. No worker reports; the operator reads the lag from Kafka itself (from the
            // group offsets the workers committed), and it keeps growing.
            String nodeName = kube.admin().nodes().list().getItems().get(0).getMetadata().getName();
            kube.kubectl(null, "cordon", nodeName).orThrow();
            try {
                kube.kubectl(null, "delete", "pod", "-n", job.namespace, "-l", "oncestream.io/job=" + job.name, "--wait=false")
                        .orThrow();
                StreamJobStatus gone = job.awaitStatus("no worker reporting, a lag all the same", E2ESettings.WAIT,
                        s -> noWorkerReports(s) && s.lag != null);
                Instant goneSeen = Instant.now();
                StreamJobStatus later = job.awaitStatus("the lag growing while no worker runs", E2ESettings.WAIT,
                        s -> Instant.now().isAfter(goneSeen.plusSeconds(10)) && noWorkerReports(s) && s.lag != null && s.lag > gone.lag);
                System.out.printf("[e2e] no worker running: lag %d records / %d s, then %d records / %d s (read by the operator)%n",
                        gone.lag, gone.lagSeconds, later.lag, later.lagSeconds);
                assertThat(later.phase).isEqualTo(Phase.Degraded);
            } finally {
                kube.kubectl(null, "uncordon", nodeName).orThrow();
            }
            job.awaitStatus("Running again after the node took pods", E2ESettings.WAIT, s -> s.phase == Phase.Running);

            // The operator dies mid-stream and comes back.
            long batchBefore = job.status().batchId;
            AuditLog audit = kube.auditLog();
            int restarts = operator.restarts();
            long mark = audit.mark();
            operator.kill9();
            // The kubelet restarts the container, as it would any crashed operator.
            Awaits.until(E2ESettings.WAIT, "the operator container restarted",
                    () -> operator.restarts() > restarts);
            operator.awaitReady(E2ESettings.WAIT);
            job.awaitStatus("status resumed past batch " + batchBefore, E2ESettings.WAIT,
                    s -> s.batchId != null && s.batchId > batchBefore + 2 && s.phase == Phase.Running);
            List<AuditLog.Request> writes = audit.since(mark, r -> r.user().equals(operator.user()) && r.isWrite()
                    && job.namespace.equals(r.namespace()));
            assertThat(writes).as("the restarted operator's writes in the job's namespace")
                    .allSatisfy(w -> assertThat(w.resource() + "/" + w.subresource()).isIn("streamjobs/status", "events/null"));
            assertThat(writes).as("status patches after the restart").anyMatch(w -> "status".equals(w.subresource()));
            assertThat(audit.since(mark, r -> r.user().equals(operator.user()) && r.code() == 403)).isEmpty();
        }
        job.awaitExactTable(E2ESettings.WAIT);
    }
}
