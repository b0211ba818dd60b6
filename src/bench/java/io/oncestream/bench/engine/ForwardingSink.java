package io.oncestream.bench.engine;

import java.util.List;
import java.util.Map;

import io.oncestream.engine.BadRowException;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.transform.SourceRecord;

/** The benchmark's sink wrappers: everything goes to the real sink unless a wrapper measures it on the way. */
abstract class ForwardingSink implements RowSink {

    protected final RowSink delegate;

    ForwardingSink(RowSink delegate) {
        this.delegate = delegate;
    }

    @Override
    public Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException {
        return delegate.prepare(origin, columns, timestampMicros);
    }

    @Override
    public List<String> primaryKeyColumns() {
        return delegate.primaryKeyColumns();
    }

    @Override
    public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException {
        return delegate.prepareDelete(origin, key, timestampMicros);
    }

    @Override
    public Write prepareDeadLetter(SourceRecord record, String error, long batchId, long timestampMicros) {
        return delegate.prepareDeadLetter(record, error, batchId, timestampMicros);
    }

    @Override
    public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
        return delegate.writeAll(writes, listener);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
