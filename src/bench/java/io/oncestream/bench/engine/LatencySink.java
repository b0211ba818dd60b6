package io.oncestream.bench.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.oncestream.engine.BadRowException;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.transform.SourceRecord;

/**
 * Wraps the real sink to measure, for every record, the time from its Kafka timestamp to the
 * moment Cassandra acknowledged the whole batch it was in (an upper bound of its own ack).
 */
final class LatencySink extends ForwardingSink {

    private final Recorder recorder;

    LatencySink(RowSink delegate, Recorder recorder) {
        super(delegate);
        this.recorder = recorder;
    }

    @Override
    public Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException {
        return new Timed(delegate.prepare(origin, columns, timestampMicros), origin.timestampMs());
    }

    @Override
    public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException {
        return new Timed(delegate.prepareDelete(origin, key, timestampMicros), origin.timestampMs());
    }

    @Override
    public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
        List<Write> inner = new ArrayList<>(writes.size());
        for (Write w : writes) {
            inner.add(w instanceof Timed t ? t.write() : w);
        }
        long writing = System.currentTimeMillis();
        List<Refused> refused = delegate.writeAll(inner, listener);
        long now = System.currentTimeMillis();
        recorder.batch(writing, now - writing);
        for (Write w : writes) {
            if (w instanceof Timed t) {
                recorder.add(t.recordTimestampMs(), now - t.recordTimestampMs(), writing - t.recordTimestampMs());
            }
        }
        return refused;
    }

    /** A write with the Kafka timestamp of its record. */
    private record Timed(Write write, long recordTimestampMs) implements Write {
    }

    /**
     * Latencies in ms: per record the whole and the part before its batch started writing, per
     * batch its writing; only of records with a Kafka timestamp from {@link #measureFrom} on and
     * of batches that started writing from then on.
     */
    static final class Recorder {
        private final Series total = new Series();
        private final Series beforeWriting = new Series();
        private final Series batchWriting = new Series();
        private long fromMs = Long.MIN_VALUE;

        synchronized void measureFrom(long epochMs) {
            fromMs = epochMs;
        }

        synchronized void add(long recordTimestampMs, long totalMs, long beforeWritingMs) {
            if (recordTimestampMs >= fromMs) {
                total.add(totalMs);
                beforeWriting.add(beforeWritingMs);
            }
        }

        synchronized void batch(long startedMs, long writingMs) {
            if (startedMs >= fromMs) {
                batchWriting.add(writingMs);
            }
        }

        /** {p50, p99, max, count} of the whole latency. */
        synchronized double[] summary() {
            return total.summary();
        }

        /** Where the time went: a line for the log. */
        synchronized String breakdown() {
            double[] b = beforeWriting.summary();
            double[] w = batchWriting.summary();
            return String.format("per record, until its batch starts writing: p50 %.0f ms, p99 %.0f ms, max %.0f ms;"
                    + " per batch, writing: p50 %.0f ms, p99 %.0f ms, max %.0f ms over %,d batches", b[0], b[1], b[2], w[0], w[1], w[2], (long) w[3]);
        }
    }

    private static final class Series {
        private long[] values = new long[1 << 16];
        private int size;

        void add(long ms) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = ms;
        }

        /** {p50, p99, max, count}. */
        double[] summary() {
            if (size == 0) {
                return new double[] {0, 0, 0, 0};
            }
            long[] sorted = Arrays.copyOf(values, size);
            Arrays.sort(sorted);
            return new double[] {sorted[(int) (size * 0.50)], sorted[Math.min(size - 1, (int) (size * 0.99))], sorted[size - 1], size};
        }
    }
}
