package io.oncestream.engine;

import io.oncestream.engine.transform.RecordTransformer;

/**
 * What a record goes through in the engine: where it is read, how it is filtered and mapped, and
 * where its row is written. Each is a seam a test replaces (an in-memory source, a
 * last-write-wins table).
 */
public record Pipeline(RecordSource source, RecordTransformer transformer, RowSink sink) {
}
