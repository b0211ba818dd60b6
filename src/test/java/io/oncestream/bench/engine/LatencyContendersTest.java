package io.oncestream.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.bench.engine.RecordLatencies.AckedBatch;
import io.oncestream.bench.engine.RecordLatencies.Range;

/** How the Spark job's latency lines become batches, without Spark. */
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
    void anAckWithoutItsProgressHasNoRecords() throws Exception {
        assertThat(LatencyContenders.sparkBatches(List.of("latency-ack\t4\t1700000000100")))
                .containsExactly(new AckedBatch(1_700_000_000_100L, List.of()));
    }
}
