package io.oncestream.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.oncestream.bench.engine.RecordLatencies.AckedBatch;
import io.oncestream.bench.engine.RecordLatencies.Range;

/** The floor's batch lines, which the latency side by side reads back. */
class AtLeastOnceFloorTest {

    @Test
    void aBatchLineReadsBackAsTheBatch() {
        Map<Integer, long[]> ranges = new TreeMap<>(Map.of(0, new long[] {10, 25}, 2, new long[] {7, 9}));
        String line = AtLeastOnceFloor.batchLine(1_700_000_000_123L, 17, ranges);
        assertThat(line).isEqualTo("floor-batch 1700000000123 17 0:10-25,2:7-9");
        assertThat(AtLeastOnceFloor.parseBatchLine(line))
                .isEqualTo(new AckedBatch(1_700_000_000_123L, List.of(new Range(0, 10, 25), new Range(2, 7, 9))));
        assertThat(AtLeastOnceFloor.rowsOf(line)).isEqualTo(17);
    }

    @Test
    void otherLinesAreNoBatch() {
        assertThat(AtLeastOnceFloor.parseBatchLine(AtLeastOnceFloor.READY)).isNull();
        assertThat(AtLeastOnceFloor.parseBatchLine("2026-12-06T10:00:00.000Z WARNING [x] something")).isNull();
        assertThat(AtLeastOnceFloor.rowsOf("2026-12-06T10:00:00.000Z WARNING [x] something")).isZero();
    }
}
