package io.oncestream.engine.plan;

import io.oncestream.engine.checkpoint.BatchOffsets;

/** What the engine does next, as decided by {@link BatchPlanner}. */
public sealed interface Plan {

    /** Batch {@code batchId} was planned but not committed: read exactly {@code offsets} again. */
    record Replay(long batchId, BatchOffsets offsets) implements Plan {
    }

    /** A new batch: write {@code offsets} to the write-ahead log, then run it. */
    record Next(long batchId, BatchOffsets offsets) implements Plan {
    }

    /** Nothing new to read; the next batch will have id {@code nextBatchId}. */
    record Idle(long nextBatchId) implements Plan {
    }
}
