package io.oncestream.engine.transform;

import java.util.Map;

/** What the filter and the column expressions made of one record. */
public sealed interface TransformResult {

    /** The record passed the filter; {@code columns} holds one value per sink column (null allowed). */
    record Row(Map<String, Object> columns) implements TransformResult {
    }

    /** The filter dropped the record. */
    record Filtered() implements TransformResult {
    }

    /** The record could not be decoded or an expression failed on it; {@code reason} says which and why. */
    record Bad(String reason) implements TransformResult {
    }
}
