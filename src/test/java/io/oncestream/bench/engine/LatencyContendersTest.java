package io.oncestream.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.bench.engine.RecordLatencies.AckedBatch;
import io.oncestream.bench.engine.RecordLatencies.Range;

/** How the Spark job's latency lines become batches, without Spark; how the worker's batch lines become phase figures. */
class LatencyContendersTest {

    @Test
    void sparkBatchesJoinEachAckWithItsBatchsOffsets() throws Exception {
        List<String> lines = List.of(
                "latency-started\t3.5.4",
                "26/12/06 10:00:00 WARN KafkaDataConsumer: something", // Spark's own logging, interleaved
                "latency-ack\t0\t1700000000100",
                "latency-progress\t0\t5\tnull\t{\"t\":{\"1\":2,\"0\":3}}",
                "latency-ack\t1\t1700000000200",
                "latency-progress\t1\t4\t{\"t\":{\"1\":2,\"0\":3}}\t{\"t\":{\"0\":5,\"1\":4}}");
        List<AckedBatch> batches = LatencyContenders.sparkBatches(lines).stream()
                .sorted(Comparator.comparingLong(AckedBatch::ackMs)).toList();
        assertThat(batches).hasSize(2);
        assertThat(batches.get(0).ackMs()).isEqualTo(1_700_000_000_100L);
        assertThat(batches.get(0).ranges()).containsExactlyInAnyOrder(new Range(0, 0, 3), new Range(1, 0, 2));
        assertThat(batches.get(1).ranges()).containsExactlyInAnyOrder(new Range(0, 3, 5), new Range(1, 2, 4));
    }

    @Test
    void phasesOfTheBatchesLoggedInTheWindowOnly() {
        String at = "2026-12-06T16:26:20.%03dZ INFO    [io.oncestream.engine.MicroBatchEngine] batch %d committed: read 174,"
                + " filtered out 0, written 174, dead-lettered 0 in 13 ms {planning=%d, reading=2, writing=6, committing=2, total=13}";
        long from = java.time.Instant.parse("2026-12-06T16:26:20.100Z").toEpochMilli();
        List<String> lines = List.of(
                String.format(at, 50, 1, 90), // before the window
                String.format(at, 100, 2, 3),
                "2026-12-06T16:26:20.150Z INFO    [io.oncestream.worker.WorkerMain] something else",
                String.format(at, 200, 3, 5),
                String.format(at, 300, 4, 7),
                String.format(at, 400, 5, 80)); // at the window's end: not in it
        assertThat(LatencyContenders.batchPhases(lines, from, from + 300))
                .isEqualTo("3 batches, ms p50/p99: planning 5/7, reading 2/2, writing 6/6, committing 2/2, total 13/13");
        assertThat(LatencyContenders.batchPhases(lines, from + 1000, from + 2000)).isEqualTo("no batch logged in the window");
    }

    @Test
    void anAckWithoutItsProgressHasNoRecords() throws Exception {
        assertThat(LatencyContenders.sparkBatches(List.of("latency-ack\t4\t1700000000100")))
                .containsExactly(new AckedBatch(1_700_000_000_100L, List.of()));
    }
}
