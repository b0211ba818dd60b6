package io.oncestream.engine.plan;

import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;

/** What a worker does first with its checkpoint, as {@link BatchPlanner#recover} decides from the two logs alone. */
public sealed interface Recovery {

    /** Both logs are empty: batch 0, from the job's {@code startingOffsets}. */
    record FirstBatch() implements Recovery {
    }

    /** The newest batch is committed: batch {@code batchId} starts at the ends of the previous one. */
    record NextBatch(long batchId, BatchOffsets previous, BatchCommit previousCommit) implements Recovery {
    }

    /** Batch {@code batchId} was planned and not committed: it is read again with exactly {@code offsets}. */
    record Replay(long batchId, BatchOffsets offsets) implements Recovery {
    }
}
