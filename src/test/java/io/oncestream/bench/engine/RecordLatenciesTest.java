package io.oncestream.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.bench.engine.RecordLatencies.AckedBatch;
import io.oncestream.bench.engine.RecordLatencies.Range;
import io.oncestream.bench.engine.RecordLatencies.Summary;

/** The latency side by side's one definition of latency, without services. */
class RecordLatenciesTest {

    @Test
    void percentilesAreNearestRank() {
        long[] hundred = new long[100];
        for (int i = 0; i < 100; i++) {
            hundred[i] = i + 1; // 1..100 ms
        }
        assertThat(RecordLatencies.percentile(hundred, 0.50)).isEqualTo(50);
        assertThat(RecordLatencies.percentile(hundred, 0.99)).isEqualTo(99);
        assertThat(RecordLatencies.percentile(hundred, 1.0)).isEqualTo(100);
        assertThat(RecordLatencies.percentile(new long[] {7}, 0.99)).isEqualTo(7);
        assertThat(RecordLatencies.percentile(new long[] {1, 2, 3}, 0.50)).isEqualTo(2);
        assertThat(RecordLatencies.percentile(new long[0], 0.99)).isZero();
    }

    @Test
    void eachRecordsLatencyIsItsBatchsAckMinusItsKafkaTimestamp() {
        // partition 0: offsets 0-3 at 1000, 1010, 1020, 1030; partition 1: offsets 0-1 at 1005, 1015
        long[][] timestamps = {{1000, 1010, 1020, 1030}, {1005, 1015}};
        List<AckedBatch> batches = List.of(
                new AckedBatch(1100, List.of(new Range(0, 2, 4), new Range(1, 1, 2))),
                new AckedBatch(1050, List.of(new Range(0, 0, 2), new Range(1, 0, 1))));
        Summary s = RecordLatencies.of(timestamps, batches, 0, Long.MAX_VALUE);
        // latencies: 50, 40 (p0, first batch), 45 (p1), 80, 70 (p0, second), 85 (p1) -> 40 45 50 70 80 85
        assertThat(s.records()).isEqualTo(6);
        assertThat(s.p50()).isEqualTo(50);
        assertThat(s.p99()).isEqualTo(85);
        assertThat(s.max()).isEqualTo(85);
        assertThat(s.missing()).isZero();
        assertThat(s.repeated()).isZero();
    }

    @Test
    void onlyRecordsWithATimestampInTheWindowCount() {
        long[][] timestamps = {{1000, 2000, 3000, 4000}};
        List<AckedBatch> batches = List.of(new AckedBatch(5000, List.of(new Range(0, 0, 4))));
        Summary s = RecordLatencies.of(timestamps, batches, 2000, 4000); // [2000, 4000)
        assertThat(s.records()).isEqualTo(2);
        assertThat(s.p50()).isEqualTo(2000); // 5000 - 3000
        assertThat(s.max()).isEqualTo(3000); // 5000 - 2000
        assertThat(s.produced()).isEqualTo(2);
    }

    @Test
    void aRecordWrittenAgainCountsWithItsFirstAcknowledgement() {
        long[][] timestamps = {{1000, 1000}};
        List<AckedBatch> batches = List.of(new AckedBatch(1900, List.of(new Range(0, 0, 2))),
                new AckedBatch(1200, List.of(new Range(0, 0, 1))));
        Summary s = RecordLatencies.of(timestamps, batches, 0, Long.MAX_VALUE);
        assertThat(s.records()).isEqualTo(2);
        assertThat(s.repeated()).isEqualTo(1);
        assertThat(s.p50()).isEqualTo(200); // offset 0 at its first ack, 1200
        assertThat(s.max()).isEqualTo(900);
    }

    @Test
    void recordsInNoBatchAreMissingAndStillProduced() {
        // trailing zeros: room the producer's arrays keep for offsets not produced
        long[][] timestamps = {{1000, 1001, 1002, 0, 0}, {}};
        List<AckedBatch> batches = List.of(new AckedBatch(1010, List.of(new Range(0, 0, 1), new Range(1, 0, 0), new Range(2, 0, 5))));
        Summary s = RecordLatencies.of(timestamps, batches, 1, Long.MAX_VALUE);
        assertThat(s.records()).isEqualTo(1);
        assertThat(s.missing()).isEqualTo(2);
        assertThat(s.produced()).isEqualTo(3);
        assertThat(s.toString()).isEqualTo("p50 10 ms, p99 10 ms, max 10 ms over 1 records, 2 never acknowledged");
    }

    @Test
    void noRecordsGiveZeros() {
        Summary s = RecordLatencies.of(new long[0][], List.of(), 0, 1);
        assertThat(s).isEqualTo(new Summary(0, 0, 0, 0, 0, 0));
    }
}
