package io.oncestream.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.contract.EngineState;
import io.oncestream.operator.ProgressDocuments;
import io.oncestream.operator.TestJobs;

/** The status projection, fed with progress documents serialised exactly as the worker serves them. */
class StatusProjectionTest {

    private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
    private static final Instant T1 = Instant.parse("2026-12-02T10:00:05Z");

    @Test
    void healthyWorkersAggregateIntoRunning() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        StreamJobStatus s = StatusProjection.project(job, null, null, List.of(
                worker(0, WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 0))),
                worker(1, WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 1)))), T0);

        assertThat(s.phase).isEqualTo(Phase.Running);
        assertThat(s.observedGeneration).isEqualTo(3L);
        assertThat(s.batchId).isEqualTo(11L);
        assertThat(s.lag).isEqualTo(20L);
        assertThat(s.committedOffsets).isEqualTo(Map.of("orders", Map.of("0", 500L, "1", 480L)));
        assertThat(s.totals.read).isEqualTo(2000L);
        assertThat(s.rates.inputRecordsPerSecond).as("over the last minute, summed, a whole number").isEqualTo(501L);
        assertThat(s.rates.writtenRowsPerSecond).isEqualTo(400L);
        assertThat(s.rates.incomingRecordsPerSecond).as("each worker sees the whole job's end offsets: not summed").isEqualTo(300L);
        assertThat(s.rates.windowSeconds).isEqualTo(60);
        assertThat(s.rates.batchRecordsPerSecond).as("the last batches' processing speed").isEqualTo(2000L);
        assertThat(s.workers).extracting(w -> w.name + " " + w.state + " " + w.batchId)
                .containsExactly("paid-orders-0 IDLE 12", "paid-orders-1 WRITING 11");
        assertThat(conditions(s)).containsEntry("Ready", "True").containsEntry("ConfigValid", "True")
                .containsEntry("SinkAvailable", "True").containsEntry("SourceAvailable", "True").containsEntry("Progressing", "True")
                .containsEntry("Stalled", "False");
    }

    @Test
    void sinkDownDegradesAndSaysWhy() {
        StreamJob job = TestJobs.job("");
        StreamJobStatus s = StatusProjection.project(job, running(), null, List.of(
                worker(0, progress(EngineState.WAITING_FOR_SINK, 4, Map.of("orders-0", new long[] {100, 300}), false,
                        "Cassandra: No node was available"))), T0);
        assertThat(s.phase).isEqualTo(Phase.Degraded);
        Condition sink = s.condition(ConditionType.SinkAvailable).orElseThrow();
        assertThat(sink.status).isEqualTo("False");
        assertThat(sink.message).contains("paid-orders-0: Cassandra: No node was available")
                .contains("nothing is committed meanwhile");
        assertThat(conditions(s)).containsEntry("Ready", "False").containsEntry("Progressing", "False");
    }

    /**
     * A worker waiting for its checkpoint's lock (its pod not ready meanwhile): Degraded, not
     * Failed; Progressing=False with reason WorkerWaiting naming the pod, the state and the
     * holder; nothing Stalled, for nobody needs to act.
     */
    @Test
    void aWorkerWaitingForItsCheckpointLockIsDegradedNotFailed() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        String holder = "/checkpoint/.lock: the checkpoint is in use by another worker process (pid 7 on host paid-orders-0"
                + " since 2026-12-02T09:59:58Z); waiting since 2026-12-02T09:59:59Z";
        StreamJobStatus s = StatusProjection.project(job, running(), null, List.of(
                worker(0, progress(EngineState.IDLE, 4, Map.of("orders-0", new long[] {300, 300}), true, null)),
                new StatusProjection.Worker("paid-orders-1", true, false,
                        progress(EngineState.WAITING_FOR_CHECKPOINT_LOCK, 2, Map.of("orders-1", new long[] {90, 300}), true,
                                holder), null)), T0);
        assertThat(s.phase).isEqualTo(Phase.Degraded);
        Condition progressing = s.condition(ConditionType.Progressing).orElseThrow();
        assertThat(progressing.status).isEqualTo("False");
        assertThat(progressing.reason).isEqualTo("WorkerWaiting");
        assertThat(progressing.message).contains("paid-orders-1 WAITING_FOR_CHECKPOINT_LOCK: " + holder);
        assertThat(conditions(s)).containsEntry("Ready", "False").containsEntry("Stalled", "False")
                .containsEntry("SinkAvailable", "True");
        assertThat(s.workers.get(1).state).isEqualTo("WAITING_FOR_CHECKPOINT_LOCK");
        assertThat(s.workers.get(1).lastError).isEqualTo(holder);
    }

    /**
     * A worker whose checkpoint volume is full (or read-only): Degraded, also for a job that was
     * never up, with Ready naming the pod, its PVC, the file and the system's reason, and what
     * to do; Progressing=False (WorkerWaiting); nothing Stalled: the worker goes on by itself.
     */
    @Test
    void aWorkerWhoseCheckpointVolumeIsFullIsDegradedNamingTheVolumeAndTheFile() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        String error = "/checkpoint/offsets/42: cannot write: No space left on device (/checkpoint/offsets/.42.tmp-5f0c)";
        for (StreamJobStatus previous : java.util.Arrays.asList(running(), null)) {
            StreamJobStatus s = StatusProjection.project(job, previous, null, List.of(
                    worker(0, progress(EngineState.IDLE, 4, Map.of("orders-0", new long[] {300, 300}), true, null)),
                    new StatusProjection.Worker("paid-orders-1", true, false,
                            progress(EngineState.WAITING_FOR_CHECKPOINT, 41, Map.of("orders-1", new long[] {90, 300}), true,
                                    error), null)), T0);
            String was = previous == null ? "a new job" : "a running job";
            assertThat(s.phase).as(was).isEqualTo(Phase.Degraded);
            Condition ready = s.condition(ConditionType.Ready).orElseThrow();
            assertThat(ready.status).isEqualTo("False");
            assertThat(ready.reason).isEqualTo("CheckpointVolumeUnavailable");
            assertThat(ready.message).as(was).isEqualTo("paid-orders-1 cannot write its checkpoint volume (PVC"
                    + " checkpoint-paid-orders-1): /checkpoint/offsets/42: cannot write: No space left on device"
                    + " (/checkpoint/offsets/.42.tmp-5f0c); no batch runs until it can: free space on the volume or grow the"
                    + " PVC, or make it writable, and the worker goes on by itself");
            Condition progressing = s.condition(ConditionType.Progressing).orElseThrow();
            assertThat(progressing.reason).isEqualTo("WorkerWaiting");
            assertThat(progressing.message).contains("paid-orders-1 WAITING_FOR_CHECKPOINT: " + error);
            assertThat(conditions(s)).containsEntry("Progressing", "False").containsEntry("Stalled", "False")
                    .containsEntry("SinkAvailable", "True").containsEntry("SourceAvailable", "True");
            assertThat(s.workers.get(1).lastError).isEqualTo(error);
            assertThat(s.batchId).as("the lowest committed batch").isEqualTo(4L);
        }
    }

    @Test
    void unreachableWorkerIsReportedAndTheLastBatchIdIsKept() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        StreamJobStatus previous = running();
        previous.batchId = 7L;
        StreamJobStatus s = StatusProjection.project(job, previous, null, List.of(
                worker(0, progress(EngineState.IDLE, 9, Map.of("orders-0", new long[] {10, 10}), true, null)),
                new StatusProjection.Worker("paid-orders-1", true, false, null, "connect timed out")), T0);
        assertThat(s.phase).isEqualTo(Phase.Degraded);
        assertThat(s.batchId).as("not every worker reported: keep the last known batch").isEqualTo(7L);
        assertThat(s.workers.get(1).state).isEqualTo("Unreachable");
        assertThat(s.workers.get(1).lastError).isEqualTo("connect timed out");
        assertThat(s.condition(ConditionType.Ready).orElseThrow().message).isEqualTo("1 of 2 workers ready, 1 reporting progress");
    }

    @Test
    void completedFailedInvalidAndSuspended() {
        StreamJob job = TestJobs.job("");
        StreamJobStatus completed = StatusProjection.project(job, null, null, List.of(
                worker(0, progress(EngineState.COMPLETED, 3, Map.of(), true, null))), T0);
        assertThat(completed.phase).isEqualTo(Phase.Completed);
        assertThat(conditions(completed)).as("done as asked: what kstatus reads as Current")
                .containsEntry("Ready", "True").containsEntry("Stalled", "False");

        StreamJobStatus failed = StatusProjection.project(job, null, null, List.of(
                worker(0, progress(EngineState.FAILED, 3, Map.of(), true, "bad record at orders-0 offset 17: ..."))), T0);
        assertThat(failed.phase).isEqualTo(Phase.Failed);
        assertThat(failed.condition(ConditionType.Ready).orElseThrow().message).isEqualTo("paid-orders-0: bad record at orders-0 offset 17: ...");
        assertThat(failed.condition(ConditionType.Stalled).orElseThrow().status).as("what kstatus reads as Failed").isEqualTo("True");
        assertThat(failed.condition(ConditionType.Stalled).orElseThrow().reason).isEqualTo("WorkerFailed");

        StreamJobStatus invalid = StatusProjection.project(job, null,
                "spec.sink.cassandra.columns.amount: CEL expression does not compile", List.of(), T0);
        assertThat(invalid.phase).isEqualTo(Phase.Failed);
        assertThat(invalid.condition(ConditionType.ConfigValid).orElseThrow().status).isEqualTo("False");
        assertThat(invalid.condition(ConditionType.ConfigValid).orElseThrow().message).startsWith("spec.sink.cassandra.columns.amount");
        assertThat(conditions(invalid)).containsEntry("Stalled", "True");

        StreamJobStatus starting = StatusProjection.project(job, null, null, List.of(
                new StatusProjection.Worker("paid-orders-0", true, false, null, "connection refused")), T0);
        assertThat(starting.phase).isEqualTo(Phase.Pending);
        assertThat(conditions(starting)).as("no worker reported: nobody knows about Cassandra or Kafka")
                .containsEntry("SinkAvailable", "Unknown").containsEntry("SourceAvailable", "Unknown");
        assertThat(starting.condition(ConditionType.SinkAvailable).orElseThrow().reason).isEqualTo("NoWorkerReported");

        StreamJob suspended = TestJobs.job("  suspend: true\n");
        assertThat(StatusProjection.project(suspended, null, null, List.of(), T0).phase).isEqualTo(Phase.Suspended);
    }

    @Test
    void transitionTimesMoveOnlyOnFlipsAndAnUnchangedJobProjectsNoChange() {
        StreamJob job = TestJobs.job("");
        List<StatusProjection.Worker> healthy = List.of(worker(0, progress(EngineState.IDLE, 5, Map.of(), true, null)));
        StreamJobStatus first = StatusProjection.project(job, null, null, healthy, T0);
        StreamJobStatus again = StatusProjection.project(job, first, null, healthy, T1);
        assertThat(StatusChanges.differ(first, again)).isFalse();

        List<StatusProjection.Worker> sinkDown = List.of(worker(0, progress(EngineState.WAITING_FOR_SINK, 5, Map.of(), false, "x")));
        StreamJobStatus flipped = StatusProjection.project(job, again, null, sinkDown, T1);
        assertThat(StatusChanges.differ(again, flipped)).isTrue();
        assertThat(flipped.condition(ConditionType.SinkAvailable).orElseThrow().lastTransitionTime).isEqualTo(T1.toString());
        assertThat(flipped.condition(ConditionType.ConfigValid).orElseThrow().lastTransitionTime).isEqualTo(T0.toString());
    }

    /**
     * A rescale, stage by stage: phase Rescaling and Progressing=False while the workers stop at
     * the barrier and while the new ones start; then Running with Rescaling=False saying what
     * was done, kept as it is by later projections; an event when it starts and when it ends.
     */
    @Test
    void aRescaleShowsItsStagesAndEndsRunning() {
        StreamJob job = TestJobs.job("  parallelism: 3\n");
        List<StatusProjection.Worker> old = List.of(
                worker(0, progress(EngineState.AT_BARRIER, 7, Map.of("orders-0", new long[] {300, 310}), true, null)),
                worker(1, progress(EngineState.WRITING, 8, Map.of("orders-1", new long[] {290, 310}), true, null)));
        StreamJobStatus barrier = StatusProjection.project(job, null, null, null, old, T0, 0,
                new Rescale(Rescale.Stage.BARRIER, 2, 3, 1, 1, null, null));
        assertThat(barrier.phase).isEqualTo(Phase.Rescaling);
        Condition rescaling = barrier.condition(ConditionType.Rescaling).orElseThrow();
        assertThat(rescaling.status).isEqualTo("True");
        assertThat(rescaling.reason).isEqualTo("StoppingAtBarrier");
        assertThat(rescaling.message).isEqualTo("2 -> 3 workers, epoch 1: stopping at a batch boundary (1 of 2 workers sealed"
                + " their checkpoints)");
        assertThat(barrier.condition(ConditionType.Progressing).orElseThrow().reason).isEqualTo("StoppingAtBarrier");
        assertThat(barrier.epoch).isZero();
        assertThat(barrier.replicas).isEqualTo(2);
        assertThat(barrier.selector).contains("paid-orders");
        assertThat(PhaseEvents.between(null, barrier)).extracting(PhaseEvents.JobEvent::reason).contains("RescaleStarted");

        List<StatusProjection.Worker> fresh = List.of(
                worker(0, progress(EngineState.IDLE, 0, Map.of("orders-0", new long[] {320, 320}), true, null)),
                worker(1, progress(EngineState.IDLE, 0, Map.of("orders-1", new long[] {320, 320}), true, null)),
                worker(2, progress(EngineState.IDLE, 0, Map.of("orders-2", new long[] {320, 320}), true, null)));
        StreamJobStatus starting = StatusProjection.project(job, barrier, null, null, fresh, T1, 1,
                new Rescale(Rescale.Stage.STARTING, 2, 3, 1, 2, List.of(7L, 9L), null));
        assertThat(starting.phase).isEqualTo(Phase.Rescaling);
        assertThat(starting.condition(ConditionType.Rescaling).orElseThrow().message)
                .isEqualTo("2 -> 3 workers, epoch 1: savepoint taken after batches [7, 9]; 2 of 3 workers running in epoch 1");
        assertThat(starting.condition(ConditionType.Rescaling).orElseThrow().lastTransitionTime).isEqualTo(T0.toString());

        StreamJobStatus done = StatusProjection.project(job, starting, null, null, fresh, T1, 1,
                new Rescale(Rescale.Stage.COMPLETED, 2, 3, 1, 3, List.of(7L, 9L), null));
        assertThat(done.phase).isEqualTo(Phase.Running);
        Condition completed = done.condition(ConditionType.Rescaling).orElseThrow();
        assertThat(completed.status).isEqualTo("False");
        assertThat(completed.reason).isEqualTo("RescaleCompleted");
        assertThat(completed.message).isEqualTo("rescaled from 2 to 3 workers (epoch 1, savepoint after batches [7, 9])");
        assertThat(done.condition(ConditionType.Progressing).orElseThrow().status).isEqualTo("True");
        assertThat(done.epoch).isEqualTo(1);
        assertThat(done.replicas).isEqualTo(3);
        assertThat(PhaseEvents.between(starting, done)).extracting(PhaseEvents.JobEvent::reason)
                .contains("RescaleCompleted", "PhaseRunning");

        StreamJobStatus later = StatusProjection.project(job, done, null, null, fresh, T1.plusSeconds(60), 1, null);
        assertThat(later.condition(ConditionType.Rescaling).orElseThrow()).usingRecursiveComparison().isEqualTo(completed);
        assertThat(PhaseEvents.between(done, later)).isEmpty();
    }

    /**
     * The phases of docs/operator.md's state machine, each transition with the event it raises:
     * a job that starts is Pending until every worker is ready and reports (no Warning on the
     * way, even with Cassandra down from the start); only a job that was Running and loses a
     * worker or its sink is Degraded, with a Warning; it is Running again when all is well;
     * resumed after a suspension, it starts again as Pending.
     */
    @Test
    void aStartingJobIsPendingAndOnlyARunningJobDegrades() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        WorkerProgress up0 = WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 0));
        WorkerProgress up1 = WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 1));

        StreamJobStatus created = StatusProjection.project(job, null, null, List.of(
                new StatusProjection.Worker("paid-orders-0", false, false, null, null),
                new StatusProjection.Worker("paid-orders-1", false, false, null, null)), T0);
        assertThat(created.phase).isEqualTo(Phase.Pending);
        assertThat(PhaseEvents.between(null, created)).extracting(PhaseEvents.JobEvent::type).containsOnly("Normal");

        StreamJobStatus halfUp = StatusProjection.project(job, created, null, List.of(
                worker(0, up0), new StatusProjection.Worker("paid-orders-1", true, false, up1, null)), T1);
        assertThat(halfUp.phase).as("one worker not ready yet: still starting").isEqualTo(Phase.Pending);
        assertThat(halfUp.condition(ConditionType.Ready).orElseThrow().reason).isEqualTo("WorkersStarting");
        assertThat(PhaseEvents.between(created, halfUp)).as("no phase change, no event").isEmpty();

        StreamJobStatus sinkDownAtStart = StatusProjection.project(job, created, null, List.of(
                worker(0, progress(EngineState.WAITING_FOR_SINK, -1, Map.of("orders-0", new long[] {0, 300}), false, "Cassandra: down")),
                worker(1, up1)), T1);
        assertThat(sinkDownAtStart.phase).isEqualTo(Phase.Pending);
        assertThat(sinkDownAtStart.condition(ConditionType.Ready).orElseThrow().message).endsWith("; Cassandra refuses writes");
        assertThat(sinkDownAtStart.condition(ConditionType.SinkAvailable).orElseThrow().status).isEqualTo("False");
        assertThat(PhaseEvents.between(created, sinkDownAtStart)).isEmpty();

        StreamJobStatus up = StatusProjection.project(job, halfUp, null, List.of(worker(0, up0), worker(1, up1)), T1);
        assertThat(up.phase).isEqualTo(Phase.Running);
        assertThat(PhaseEvents.between(halfUp, up)).extracting(e -> e.type() + " " + e.reason()).containsExactly("Normal PhaseRunning");

        StreamJobStatus lost = StatusProjection.project(job, up, null, List.of(
                worker(0, up0), new StatusProjection.Worker("paid-orders-1", false, false, null, null)), T1);
        assertThat(lost.phase).isEqualTo(Phase.Degraded);
        assertThat(lost.condition(ConditionType.Ready).orElseThrow().reason).isEqualTo("WorkersDegraded");
        assertThat(PhaseEvents.between(up, lost)).extracting(e -> e.type() + " " + e.reason()).containsExactly("Warning PhaseDegraded");

        StreamJobStatus stillLost = StatusProjection.project(job, lost, null, List.of(
                worker(0, up0), new StatusProjection.Worker("paid-orders-1", true, false, up1, null)), T1);
        assertThat(stillLost.phase).as("a Degraded job stays Degraded until all is well").isEqualTo(Phase.Degraded);

        StreamJobStatus back = StatusProjection.project(job, stillLost, null, List.of(worker(0, up0), worker(1, up1)), T1);
        assertThat(back.phase).isEqualTo(Phase.Running);

        StreamJob suspendedJob = TestJobs.job("  parallelism: 2\n  suspend: true\n");
        StreamJobStatus suspended = StatusProjection.project(suspendedJob, back, null, List.of(), T1);
        assertThat(suspended.phase).isEqualTo(Phase.Suspended);
        StreamJobStatus resumed = StatusProjection.project(job, suspended, null, List.of(
                worker(0, up0), new StatusProjection.Worker("paid-orders-1", true, false, null, "connection refused")), T1);
        assertThat(resumed.phase).as("resumed: starting, not degraded").isEqualTo(Phase.Pending);
        assertThat(PhaseEvents.between(suspended, resumed)).extracting(PhaseEvents.JobEvent::type).containsOnly("Normal");

        StreamJobStatus failed = StatusProjection.project(job, back, null, List.of(worker(0, up0),
                worker(1, progress(EngineState.FAILED, 3, Map.of(), true, "bad record"))), T1);
        StreamJobStatus retrying = StatusProjection.project(job, failed, null, List.of(worker(0, up0),
                new StatusProjection.Worker("paid-orders-1", true, false,
                        progress(EngineState.RETRYING, 3, Map.of(), true, "starting again at 10:00:10"), null)), T1);
        assertThat(retrying.phase).as("a failed worker that starts again: the job starts again").isEqualTo(Phase.Pending);
    }

    /**
     * Lag from the workers' probes: each partition's figure from its owner when the owner reports,
     * else from another worker's read of the consumer group (the freshest one); a gone worker's
     * partitions keep their lag, which grows with each probe; the age of the oldest record not
     * committed is the job's lag in seconds; committed offsets of the gone worker's partitions
     * come from the group.
     */
    @Test
    void lagComesFromTheProbesAndKeepsGrowingForAGoneWorker() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        // Worker 0 owns orders-0 and sees orders-1 (worker 1's) through the group.
        WorkerProgress w0 = ProgressDocuments.withLag(0, EngineState.WAITING_FOR_SINK, 4, Map.of("orders-0", new long[] {300, 300}),
                "2026-12-02T10:00:04Z", Map.of("orders-0", new long[] {300, 900, 42_000, 1}, "orders-1", new long[] {250, 800, 61_500, 0}));
        StreamJobStatus gone = StatusProjection.project(job, running(), null, List.of(worker(0, w0),
                new StatusProjection.Worker("paid-orders-1", false, false, null, null)), T1);
        assertThat(s(gone.partitionLag)).isEqualTo("{orders={0=600, 1=550}}");
        assertThat(gone.lag).as("the planned latest (300) is stale; the probe's 900 counts").isEqualTo(1150L);
        assertThat(gone.lagSeconds).isEqualTo(61L);
        assertThat(gone.committedOffsets).as("worker 1's partition from the group").isEqualTo(
                Map.of("orders", Map.of("0", 300L, "1", 250L)));

        WorkerProgress later = ProgressDocuments.withLag(0, EngineState.WAITING_FOR_SINK, 4, Map.of("orders-0", new long[] {300, 300}),
                "2026-12-02T10:00:09Z", Map.of("orders-0", new long[] {300, 1400, 47_000, 1}, "orders-1", new long[] {250, 1300, 66_500, 0}));
        StreamJobStatus growing = StatusProjection.project(job, gone, null, List.of(worker(0, later),
                new StatusProjection.Worker("paid-orders-1", false, false, null, null)), T1);
        assertThat(growing.lag).as("grows while nothing commits").isEqualTo(2150L);
        assertThat(growing.lagSeconds).isEqualTo(66L);

        // Worker 1 back: its own (exact) figure wins over worker 0's newer view through the group.
        WorkerProgress w1 = ProgressDocuments.withLag(1, EngineState.IDLE, 5, Map.of("orders-1", new long[] {1300, 1300}),
                "2026-12-02T10:00:08Z", Map.of("orders-1", new long[] {1300, 1300, 0, 1}, "orders-0", new long[] {290, 1400, 50_000, 0}));
        StreamJobStatus both = StatusProjection.project(job, growing, null, List.of(worker(0, later), worker(1, w1)), T1);
        assertThat(s(both.partitionLag)).isEqualTo("{orders={0=1100, 1=0}}");
        assertThat(both.lagSeconds).isEqualTo(47L);
        assertThat(both.committedOffsets).isEqualTo(Map.of("orders", Map.of("0", 300L, "1", 1300L)));
    }

    /**
     * Just after a rescale the new workers' first probes may not have read the oldest record's time
     * yet, and a worker that has not probed at all has only its plan's figures: the records behind
     * count, but the job's age is unknown (absent), never 0, which would say the job caught up
     * when it is 16 s behind. Once every partition behind has its age, the job's is the oldest.
     */
    @Test
    void anAgeNotReadYetLeavesTheJobsAgeUnknownRatherThanZero() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        WorkerProgress first0 = ProgressDocuments.withLag(0, EngineState.WRITING, 7, Map.of("orders-0", new long[] {300, 400}),
                "2026-12-02T10:00:04Z", Map.of("orders-0", new long[] {300, 1900, -1, 1}, "orders-1", new long[] {250, 250, 0, 0}));
        WorkerProgress probed1 = ProgressDocuments.withLag(1, EngineState.WRITING, 7, Map.of("orders-1", new long[] {250, 250}),
                "2026-12-02T10:00:04Z", Map.of("orders-1", new long[] {250, 250, 0, 1}, "orders-0", new long[] {300, 1900, 16_000, 0}));
        StreamJobStatus s = StatusProjection.project(job, running(), null, List.of(worker(0, first0), worker(1, probed1)), T1);
        assertThat(s.lag).as("the records behind are known").isEqualTo(1600L);
        assertThat(s.lagSeconds).as("partition 0's owner has not read its oldest record's time").isNull();

        WorkerProgress notProbed = ProgressDocuments.parsed(0, EngineState.WRITING, 7, Map.of("orders-0", new long[] {300, 400}),
                true, null);
        StreamJobStatus before = StatusProjection.project(TestJobs.job(""), running(), null, List.of(worker(0, notProbed)), T1);
        assertThat(before.lag).as("from the worker's plan").isEqualTo(100L);
        assertThat(before.lagSeconds).as("no probe yet: no age").isNull();

        WorkerProgress again0 = ProgressDocuments.withLag(0, EngineState.WRITING, 7, Map.of("orders-0", new long[] {300, 400}),
                "2026-12-02T10:00:09Z", Map.of("orders-0", new long[] {300, 2400, 21_000, 1}, "orders-1", new long[] {250, 250, 0, 0}));
        StreamJobStatus known = StatusProjection.project(job, s, null, List.of(worker(0, again0), worker(1, probed1)), T1);
        assertThat(known.lagSeconds).isEqualTo(21L);
        StreamJobStatus caughtUp = StatusProjection.project(job, known, null, List.of(worker(0,
                ProgressDocuments.withLag(0, EngineState.IDLE, 9, Map.of("orders-0", new long[] {2400, 2400}), "2026-12-02T10:00:14Z",
                        Map.of("orders-0", new long[] {2400, 2400, 0, 1}))), worker(1, probed1)), T1);
        assertThat(caughtUp.lagSeconds).as("nothing behind: 0, known").isZero();
    }

    /**
     * Workers cut off from Kafka (a network partition) report their probe's last figures, frozen,
     * with their source unavailable: the operator's own reading, which grows with the records
     * still arriving, counts instead; without one, the frozen figures are all there is.
     */
    @Test
    void workersThatCannotReachKafkaGiveWayToTheOperatorsReading() {
        StreamJob job = TestJobs.job("");
        WorkerProgress frozen = cutOffWorker0();
        WorkerProgress.LagReport operator = new WorkerProgress.LagReport("2026-12-02T10:00:30Z",
                Map.of("orders-0", new WorkerProgress.PartitionLag(300, 3_900, 3_600, 68_000L, false)));

        StreamJobStatus s = StatusProjection.project(job, running(), null, null, List.of(worker(0, frozen)), T1, null, null,
                operator);
        assertThat(s.lag).as("the operator's reading, not the frozen 600").isEqualTo(3_600L);
        assertThat(s.lagSeconds).isEqualTo(68L);
        assertThat(s.condition(ConditionType.SourceAvailable).orElseThrow().status).isEqualTo("False");

        StreamJobStatus without = StatusProjection.project(job, running(), null, null, List.of(worker(0, frozen)), T1, null,
                null, null);
        assertThat(without.lag).as("no reading of the operator's: the workers' last figures").isEqualTo(600L);

        WorkerProgress.LagReport stale = new WorkerProgress.LagReport("2026-12-02T09:58:00Z",
                Map.of("orders-0", new WorkerProgress.PartitionLag(300, 350, 50, 1_000L, false)));
        StreamJobStatus older = StatusProjection.project(job, running(), null, null, List.of(worker(0, frozen)), T1, null, null,
                stale);
        assertThat(older.lag).as("an operator's reading older than the worker's last one does not count").isEqualTo(600L);
    }

    /**
     * One worker cut off from Kafka while the other still reaches it: the other's fresher view of
     * the cut-off worker's partition, read from the group, wins over the frozen figure.
     */
    @Test
    void aWorkerCutOffFromKafkaGivesWayToAFresherWorker() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        WorkerProgress frozen = cutOffWorker0();
        WorkerProgress other = ProgressDocuments.withLag(1, EngineState.IDLE, 5, Map.of("orders-1", new long[] {1300, 1300}),
                "2026-12-02T10:00:20Z", Map.of("orders-1", new long[] {1300, 1300, 0, 1}, "orders-0", new long[] {300, 2900, 58_000, 0}));
        StreamJobStatus s = StatusProjection.project(job, running(), null, List.of(worker(0, frozen), worker(1, other)), T1);
        assertThat(s(s.partitionLag)).as("partition 0 from worker 1's fresher reading").isEqualTo("{orders={0=2600, 1=0}}");
    }

    /**
     * A worker of a newer build may report a state this operator does not know: it is shown as
     * reported, and counts as neither failed nor completed nor waiting.
     */
    @Test
    void aStateFromANewerWorkerIsShownAndCountsAsNoKnownState() {
        WorkerProgress known = progress(EngineState.FAILED, 4, Map.of("orders-0", new long[] {10, 10}), true, "boom");
        assertThat(known.engineState()).isEqualTo(EngineState.FAILED);
        WorkerProgress newer = new WorkerProgress(known.jobId(), known.workerIndex(), "DEFRAGMENTING", known.batchId(),
                known.partitions(), known.totals(), known.lastBatch(), true, true, null, known.epoch(), known.barrier(), known.lag(),
                known.rates());
        assertThat(newer.engineState()).isNull();
        assertThat(newer.is(EngineState.FAILED)).isFalse();
        StreamJobStatus s = StatusProjection.project(TestJobs.job(""), running(), null, List.of(worker(0, newer)), T1);
        assertThat(s.workers.get(0).state).isEqualTo("DEFRAGMENTING");
        assertThat(s.phase).isNotEqualTo(Phase.Failed);
    }

    /** Worker 0, cut off from Kafka: its probe last read partition 0 at 10:00:04, 600 records behind. */
    private static WorkerProgress cutOffWorker0() {
        return cutOff(ProgressDocuments.withLag(0, EngineState.WAITING_FOR_SOURCE, 4, Map.of("orders-0", new long[] {300, 300}),
                "2026-12-02T10:00:04Z", Map.of("orders-0", new long[] {300, 900, 42_000, 1})),
                "Kafka: Timed out waiting for a node assignment");
    }

    private static WorkerProgress cutOff(WorkerProgress p, String error) {
        return new WorkerProgress(p.jobId(), p.workerIndex(), p.state(), p.batchId(), p.partitions(), p.totals(), p.lastBatch(),
                p.sinkAvailable(), false, error, p.epoch(), p.barrier(), p.lag(), p.rates());
    }

    /** A rescale the autoscaler starts is an event with its reasons; an unchanged decision is none. */
    @Test
    void anAutoscalerDecisionIsAnEvent() {
        StreamJobStatus before = running();
        before.autoscaler = new StreamJobStatus.Autoscaler();
        before.autoscaler.rescales = 1;
        StreamJobStatus after = running();
        after.autoscaler = new StreamJobStatus.Autoscaler();
        after.autoscaler.rescales = 2;
        after.autoscaler.lastDecision = "1 -> 3 workers, up: lag 30 s (target 10 s)";
        assertThat(PhaseEvents.between(before, after)).extracting(e -> e.type() + " " + e.reason() + " " + e.message())
                .containsExactly("Normal Autoscaled 1 -> 3 workers, up: lag 30 s (target 10 s)");
        assertThat(PhaseEvents.between(after, after)).isEmpty();
    }

    /**
     * An idle worker's answers are equal from poll to poll although its probe read the lag again
     * in between: the operator does not reconcile an idle job for nothing (ProgressWatch
     * compares answers). A lag that moved is a different answer.
     */
    @Test
    void anIdleWorkersAnswersStayEqualWhenOnlyTheProbesTimeMoves() {
        Map<String, long[]> own = Map.of("orders-0", new long[] {300, 300});
        WorkerProgress a = ProgressDocuments.withLag(0, EngineState.IDLE, 4, own, "2026-12-02T10:00:04Z",
                Map.of("orders-0", new long[] {300, 300, 0, 1}));
        WorkerProgress b = ProgressDocuments.withLag(0, EngineState.IDLE, 4, own, "2026-12-02T10:00:09Z",
                Map.of("orders-0", new long[] {300, 300, 0, 1}));
        WorkerProgress moved = ProgressDocuments.withLag(0, EngineState.IDLE, 4, own, "2026-12-02T10:00:09Z",
                Map.of("orders-0", new long[] {300, 301, 5, 1}));
        assertThat(a).isEqualTo(b);
        assertThat(a).isNotEqualTo(moved);
    }

    /**
     * A restarted worker that has not read its checkpoint yet (STARTING, batch -1, counts 0)
     * changes neither the job's batch nor its totals, and its own batch stays what it was.
     */
    @Test
    void aRestartedWorkerDoesNotResetTheJobsFigures() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        StreamJobStatus before = running();
        WorkerProgress starting = WorkerProgress.parse(ProgressDocuments.json("shop/paid-orders", 1, EngineState.STARTING, -1,
                Map.of(), true, null));
        StreamJobStatus s = StatusProjection.project(job, before, null, List.of(
                worker(0, WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 0))), worker(1, starting)), T1);
        assertThat(s.batchId).isEqualTo(11L);
        assertThat(s.workers.get(1).batchId).isEqualTo(11L);
        assertThat(s.totals).usingRecursiveComparison().isEqualTo(before.totals);
    }

    private static String s(Object o) {
        return String.valueOf(o);
    }

    /** The status of a job that was running. */
    private static StreamJobStatus running() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        return StatusProjection.project(job, null, null, List.of(
                worker(0, WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 0))),
                worker(1, WorkerProgress.parse(ProgressDocuments.healthy("shop/paid-orders", 1)))), T0);
    }

    private static StatusProjection.Worker worker(int index, WorkerProgress progress) {
        return new StatusProjection.Worker("paid-orders-" + index, true, true, progress, null);
    }

    private static WorkerProgress progress(EngineState state, long batchId, Map<String, long[]> partitions, boolean sink,
            String error) {
        return ProgressDocuments.parsed(0, state, batchId, partitions, sink, error);
    }

    private static Map<String, String> conditions(StreamJobStatus s) {
        Map<String, String> out = new java.util.TreeMap<>();
        s.conditions.forEach(c -> out.put(c.type, c.status));
        return out;
    }

}
