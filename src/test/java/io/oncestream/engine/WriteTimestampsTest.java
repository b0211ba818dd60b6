package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;

/**
 * Property test of the timestamp rule against a model of Cassandra's reconciliation (the
 * highest write timestamp wins): replaying batches, shuffled and repeated, leaves the same
 * table as applying each record once in offset order. The real-Cassandra version is
 * {@code CassandraSinkIT.replayingShuffledBatchesLeavesTheTableOfInOrderApplication}.
 */
class WriteTimestampsTest {

    @Test
    void strictlyIncreasingEvenForEqualOrBackwardsRecordTimestamps() {
        long a = WriteTimestamps.next(0, 5000);
        long b = WriteTimestamps.next(a, 5000);
        long c = WriteTimestamps.next(b, 4000);
        long d = WriteTimestamps.next(c, 9000);
        assertThat(a).isEqualTo(5_000_000);
        assertThat(b).isEqualTo(5_000_001);
        assertThat(c).isEqualTo(5_000_002);
        assertThat(d).isEqualTo(9_000_000);
    }

    @RepeatedTest(50)
    void shuffledReplaysLeaveTheTableOfInOrderApplication(RepetitionInfo repetition) {
        // A different, reproducible run each repetition; the seed is in every failure's message.
        long seed = 0x5EEDL * 31 + repetition.getCurrentRepetition();
        Random random = new Random(seed);
        int records = 200 + random.nextInt(300);
        int keys = 1 + random.nextInt(20);
        List<long[]> log = new ArrayList<>(); // {offset, key, recordTimestampMs}
        long clock = 1_000_000;
        for (int offset = 0; offset < records; offset++) {
            clock += random.nextInt(3) - 1; // equal, forwards and backwards producer timestamps
            log.add(new long[] {offset, random.nextInt(keys), clock});
        }
        Map<Long, Long> expected = new HashMap<>();
        for (long[] r : log) {
            expected.put(r[1], r[0]); // the last record (by offset) of each key
        }

        // Batches of random sizes, timestamps chained from each batch's base as the engine does.
        List<List<long[]>> writesPerBatch = new ArrayList<>();
        long base = 0;
        for (int start = 0; start < records; ) {
            int end = Math.min(records, start + 1 + random.nextInt(60));
            List<long[]> writes = new ArrayList<>();
            long ts = base;
            for (long[] r : log.subList(start, end)) {
                ts = WriteTimestamps.next(ts, r[2]);
                writes.add(new long[] {r[1], ts, r[0]});
            }
            base = ts;
            writesPerBatch.add(writes);
            start = end;
        }
        // Every batch applied once, some twice or three times, all in a random order.
        List<long[]> applied = new ArrayList<>();
        for (List<long[]> batch : writesPerBatch) {
            int times = 1 + random.nextInt(3);
            for (int i = 0; i < times; i++) {
                applied.addAll(batch);
            }
        }
        Collections.shuffle(applied, random);
        Map<Long, long[]> table = new HashMap<>(); // key -> {ts, offset}
        for (long[] w : applied) {
            long[] current = table.get(w[0]);
            if (current == null || w[1] > current[0]) {
                table.put(w[0], new long[] {w[1], w[2]});
            }
        }
        Map<Long, Long> actual = new HashMap<>();
        table.forEach((k, v) -> actual.put(k, v[1]));
        assertThat(actual).as("table after shuffled replays, seed " + seed).isEqualTo(expected);
    }
}
