package io.oncestream.bench.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;

/**
 * The latency side by side's one definition of latency, computed the same way for every
 * contender: a record's latency is the time Cassandra acknowledged the write of the batch that
 * held it minus the record's Kafka timestamp (its producer's CreateTime). Each contender reports
 * only its batches, as an acknowledgement time and the offsets each batch held per Kafka
 * partition; each record's timestamp comes from the producer's own acknowledgements
 * ({@link TimedProducer}). No contender computes its own percentiles, so none can define them
 * differently.
 */
final class RecordLatencies {

    private RecordLatencies() {
    }

    /** Offsets {@code [start, end)} of one Kafka partition in a batch. */
    record Range(int partition, long start, long end) {
    }

    /** A batch as a contender reports it: when the last write of its rows was acknowledged, and the records it held. */
    record AckedBatch(long ackMs, List<Range> ranges) {
    }

    /**
     * Latencies of the records with a Kafka timestamp in the measured window, in ms: nearest-rank
     * p50 and p99 and the max over {@code records} records; {@code missing} of the window's
     * records were in no acknowledged batch, {@code repeated} were in more than one (an
     * at-least-once contender may write a record again: its first acknowledgement counts).
     */
    record Summary(double p50, double p99, double max, long records, long missing, long repeated) {

        /** Records produced in the window, whether acknowledged or not: what CPU per record divides by. */
        long produced() {
            return records + missing;
        }

        @Override
        public String toString() {
            return String.format("p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d records%s%s", p50, p99, max, records,
                    missing == 0 ? "" : String.format(", %,d never acknowledged", missing),
                    repeated == 0 ? "" : String.format(", %,d written more than once", repeated));
        }
    }

    /**
     * The latencies of the records whose timestamp is in {@code [fromMs, toMs)}, from
     * {@code timestamps} (per partition, indexed by offset; 0 where no record was produced) and
     * the contender's {@code batches}, in any order.
     */
    static Summary of(long[][] timestamps, List<AckedBatch> batches, long fromMs, long toMs) {
        List<AckedBatch> byAck = new ArrayList<>(batches);
        byAck.sort(Comparator.comparingLong(AckedBatch::ackMs));
        BitSet[] seen = new BitSet[timestamps.length];
        for (int p = 0; p < seen.length; p++) {
            seen[p] = new BitSet();
        }
        long[] latencies = new long[1024];
        int count = 0;
        long repeated = 0;
        for (AckedBatch batch : byAck) {
            for (Range range : batch.ranges()) {
                if (range.partition() >= timestamps.length) {
                    continue; // a partition nothing was produced to
                }
                long[] produced = timestamps[range.partition()];
                for (long offset = range.start(); offset < Math.min(range.end(), produced.length); offset++) {
                    long ts = produced[(int) offset];
                    if (ts < fromMs || ts >= toMs) {
                        continue;
                    }
                    if (seen[range.partition()].get((int) offset)) {
                        repeated++;
                        continue;
                    }
                    seen[range.partition()].set((int) offset);
                    if (count == latencies.length) {
                        latencies = Arrays.copyOf(latencies, count * 2);
                    }
                    latencies[count++] = batch.ackMs() - ts;
                }
            }
        }
        long inWindow = 0;
        for (long[] partition : timestamps) {
            for (long ts : partition) {
                if (ts >= fromMs && ts < toMs) {
                    inWindow++;
                }
            }
        }
        long[] sorted = Arrays.copyOf(latencies, count);
        Arrays.sort(sorted);
        return new Summary(percentile(sorted, 0.50), percentile(sorted, 0.99), count == 0 ? 0 : sorted[count - 1], count,
                inWindow - count, repeated);
    }

    /** The nearest-rank {@code q}-quantile of ascending {@code sorted}: the smallest value with at least q of all at or below it; 0 for none. */
    static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length - 1e-9); // a product just above an integer by rounding is that integer
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }
}
