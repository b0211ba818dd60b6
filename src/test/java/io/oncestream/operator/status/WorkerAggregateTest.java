package io.oncestream.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.contract.EngineState;
import io.oncestream.operator.ProgressDocuments;

/** The workers' answers folded once: counts, the first worker with each trouble, and the job's figures. */
class WorkerAggregateTest {

    @Test
    void countsTheWorkersAndNamesTheFirstWithEachTrouble() {
        WorkerAggregate a = WorkerAggregate.of(List.of(
                worker(0, true, ProgressDocuments.parsed(0, EngineState.WAITING_FOR_SINK, 4, Map.of("orders-0", new long[] {10, 12}),
                        false, "Cassandra down")),
                worker(1, false, ProgressDocuments.parsed(1, EngineState.FAILED, 3, Map.of("orders-1", new long[] {7, 9}), false,
                        "bad record")),
                new StatusProjection.Worker("paid-orders-2", true, false, null, "connection refused")), null);
        assertThat(a.expected()).isEqualTo(3);
        assertThat(a.reporting()).isEqualTo(2);
        assertThat(a.ready()).isEqualTo(1);
        assertThat(a.allReporting()).isFalse();
        assertThat(a.failed()).isEqualTo("paid-orders-1: bad record");
        assertThat(a.sinkDown()).isEqualTo("paid-orders-0: Cassandra down");
        assertThat(a.progressing()).isFalse();
        assertThat(a.notReady()).isEqualTo("1 of 3 workers ready, 2 reporting progress; Cassandra refuses writes");
        assertThat(a.statuses()).extracting(w -> w.name + " " + w.state + " " + w.batchId)
                .containsExactly("paid-orders-0 WAITING_FOR_SINK 4", "paid-orders-1 FAILED 3", "paid-orders-2 Unreachable null");
        assertThat(a.committedOffsets(Map.of("orders-1", 5L, "orders-3", 2L)))
                .isEqualTo(Map.of("orders", Map.of("0", 10L, "1", 7L, "3", 2L)));
    }

    @Test
    void aWorkerStillReadingItsCheckpointKeepsThePreviousBatchAndTotals() {
        StreamJobStatus previous = new StreamJobStatus();
        previous.batchId = 9L;
        previous.totals = new StreamJobStatus.Totals();
        StreamJobStatus.WorkerStatus before = new StreamJobStatus.WorkerStatus();
        before.name = "paid-orders-1";
        before.batchId = 8L;
        previous.workers = List.of(before);
        WorkerAggregate a = WorkerAggregate.of(List.of(
                worker(0, true, ProgressDocuments.parsed(0, EngineState.IDLE, 12, Map.of("orders-0", new long[] {5, 5}), true, null)),
                worker(1, true, ProgressDocuments.parsed(1, EngineState.STARTING, -1, Map.of(), true, null))), previous);
        assertThat(a.batchId(previous)).isEqualTo(9L);
        assertThat(a.totals(previous)).isSameAs(previous.totals);
        assertThat(a.statuses().get(1).batchId).isEqualTo(8L);

        WorkerAggregate up = WorkerAggregate.of(List.of(
                worker(0, true, ProgressDocuments.parsed(0, EngineState.IDLE, 12, Map.of("orders-0", new long[] {5, 5}), true, null)),
                worker(1, true, ProgressDocuments.parsed(1, EngineState.IDLE, 11, Map.of("orders-1", new long[] {5, 5}), true, null))),
                previous);
        assertThat(up.batchId(previous)).isEqualTo(11L);
        assertThat(up.totals(previous).read).isEqualTo(2000L);
        assertThat(up.allReady()).isTrue();
        assertThat(up.rates().inputRecordsPerSecond).isEqualTo(501L);
        assertThat(up.rates().incomingRecordsPerSecond).as("the widest view, not a sum").isEqualTo(300L);
    }

    private static StatusProjection.Worker worker(int index, boolean ready, WorkerProgress progress) {
        return new StatusProjection.Worker("paid-orders-" + index, true, ready, progress, null);
    }
}
