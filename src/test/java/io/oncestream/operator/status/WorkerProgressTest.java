package io.oncestream.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;

import org.junit.jupiter.api.Test;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
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
        assertThat(p.lag().partitions()).containsEntry("orders-0", new WorkerProgress.PartitionLag(500, 520, 20, 1500, true));
        assertThat(p.rates()).isEqualTo(new WorkerProgress.Rates(60, 250.4, 200.2, null));
    }
}
