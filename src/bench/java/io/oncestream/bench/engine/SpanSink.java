package io.oncestream.bench.engine;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.oncestream.engine.BadRowException;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.transform.SourceRecord;

/**
 * Wraps the real sink to time a run from its first mapped record to its last acknowledged
 * write, the span the raw loader is timed over.
 */
final class SpanSink extends ForwardingSink {

    /** First record mapped and last write acknowledged, in {@link System#nanoTime()}. */
    static final class Span {
        private final AtomicLong first = new AtomicLong();
        private final AtomicLong last = new AtomicLong();

        void record() {
            first.compareAndSet(0, System.nanoTime());
        }

        void acknowledged() {
            last.accumulateAndGet(System.nanoTime(), Math::max);
        }

        double seconds() {
            if (first.get() == 0 || last.get() <= first.get()) {
                throw new IllegalStateException("no record was written");
            }
            return (last.get() - first.get()) / 1e9;
        }
    }

    private final Span span;

    SpanSink(RowSink delegate, Span span) {
        super(delegate);
        this.span = span;
    }

    @Override
    public Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException {
        span.record();
        return delegate.prepare(origin, columns, timestampMicros);
    }

    @Override
    public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException {
        span.record();
        return delegate.prepareDelete(origin, key, timestampMicros);
    }

    @Override
    public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
        return delegate.writeAll(writes, timed(listener));
    }

    private SinkListener timed(SinkListener listener) {
        return new SinkListener() {
            @Override
            public void waitingForSink(Throwable cause, int pendingWrites) {
                listener.waitingForSink(cause, pendingWrites);
            }

            @Override
            public void sinkAvailable() {
                listener.sinkAvailable();
            }

            @Override
            public void acknowledged(int count) {
                span.acknowledged();
                listener.acknowledged(count);
            }
        };
    }
}
