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
import io.oncestream.engine.EngineState;
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
        assertThat(s.rates.inputRecordsPerSecond).isEqualTo(2000.0);
        assertThat(s.workers).extracting(w -> w.name + " " + w.state + " " + w.batchId)
                .containsExactly("paid-orders-0 IDLE 12", "paid-orders-1 WRITING 11");
        assertThat(conditions(s)).containsEntry("Ready", "True").containsEntry("ConfigValid", "True")
                .containsEntry("SinkAvailable", "True").containsEntry("SourceAvailable", "True").containsEntry("Progressing", "True")
                .containsEntry("Stalled", "False");
    }

    @Test
    void sinkDownDegradesAndSaysWhy() {
        StreamJob job = TestJobs.job("");
        StreamJobStatus s = StatusProjection.project(job, null, null, List.of(
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
        StreamJobStatus s = StatusProjection.project(job, null, null, List.of(
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

    @Test
    void unreachableWorkerIsReportedAndTheLastBatchIdIsKept() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        StreamJobStatus previous = new StreamJobStatus();
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
