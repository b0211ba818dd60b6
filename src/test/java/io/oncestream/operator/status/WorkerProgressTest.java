package io.oncestream.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;

import org.junit.jupiter.api.Test;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.SourceLag;
import io.oncestream.testing.LocalService;

/** The operator's view of a worker's answer, from the committed {@code /progress} document a worker serves. */
class WorkerProgressTest {

    @Test
    void theViewOfTheCommittedDocumentKeepsWhatTheStatusIsProjectedFrom() throws IOException {
        String golden = Files.readString(LocalService.repoDir().resolve("src/test/resources/formats/progress.json"));
        WorkerProgress p = WorkerProgress.parse(golden);
        assertThat(p.is(EngineState.AT_BARRIER)).isTrue();
        assertThat(p.partitions()).containsExactly(java.util.Map.entry("orders-0", new WorkerProgress.Partition(500, 520)),
                java.util.Map.entry("orders-2", new WorkerProgress.Partition(480, 480)));
        assertThat(p.totals()).isEqualTo(new WorkerProgress.Totals(1000, 100, 850, 50));
        assertThat(p.lastBatch()).isEqualTo(new WorkerProgress.LastBatch(1000.0, 850.5));
        assertThat(p.sinkAvailable()).isFalse();
        assertThat(p.lastError()).isEqualTo("Cassandra: no node was available");
        assertThat(p.barrier()).isEqualTo(Progress.parse(golden).barrier());
        assertThat(p.lag().partitions()).containsEntry("orders-0", new WorkerProgress.PartitionLag(500, 520, 20, 1500L, true));
        assertThat(p.rates()).isEqualTo(new WorkerProgress.Rates(60, 250.4, 200.2, null));
    }

    /**
     * A probe that could not read the oldest record's time in time (a new worker's first, say)
     * goes out as the document always had it, age 0 with no oldest record's time, and reaches
     * the operator as an age not known; a partition with nothing behind is 0, known.
     */
    @Test
    void anAgeTheProbeDidNotReadReachesTheOperatorAsUnknown() throws IOException {
        ProgressTracker tracker = new ProgressTracker("shop/paid-orders", 0, 1);
        tracker.lag(java.util.Map.of("orders-0", new SourceLag(300, 400, null, true), "orders-1", new SourceLag(50, 50, null, false),
                "orders-2", new SourceLag(70, 90, 1_000L, false)), java.time.Instant.parse("2026-12-02T10:00:00Z"));
        Progress sent = tracker.snapshot();
        assertThat(sent.lag().partitions().get("orders-0").ageMs()).as("the document's format is unchanged").isZero();
        assertThat(sent.lag().partitions().get("orders-0").oldestRecordMs()).isNull();

        WorkerProgress seen = WorkerProgress.parse(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(sent));
        assertThat(seen.lag().partitions().get("orders-0").ageMs()).isNull();
        assertThat(seen.lag().partitions().get("orders-1").ageMs()).isZero();
        assertThat(seen.lag().partitions().get("orders-2").ageMs()).isPositive();
    }
}
