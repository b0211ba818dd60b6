package io.oncestream.bench;

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
    public void writeAll(List<Write> writes, SinkListener listener) {
        List<Write> inner = new ArrayList<>(writes.size());
        for (Write w : writes) {
            inner.add(w instanceof Timed t ? t.write() : w);
        }
        delegate.writeAll(inner, listener);
        long now = System.currentTimeMillis();
        for (Write w : writes) {
            if (w instanceof Timed t) {
                recorder.add(now - t.recordTimestampMs());
            }
        }
    }

    /** A write with the Kafka timestamp of its record. */
    private record Timed(Write write, long recordTimestampMs) implements Write {
    }

    /** Latencies in ms. */
    static final class Recorder {
        private long[] values = new long[1 << 16];
        private int size;

        synchronized void add(long ms) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = ms;
        }

        /** {p50, p99, max, count}. */
        synchronized double[] summary() {
            if (size == 0) {
                return new double[] {0, 0, 0, 0};
            }
            long[] sorted = Arrays.copyOf(values, size);
            Arrays.sort(sorted);
            return new double[] {sorted[(int) (size * 0.50)], sorted[Math.min(size - 1, (int) (size * 0.99))], sorted[size - 1], size};
        }
    }
}
