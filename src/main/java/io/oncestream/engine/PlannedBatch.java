package io.oncestream.engine;

import io.oncestream.engine.checkpoint.BatchOffsets;

/**
 * A batch whose {@code offsets/N} is durable: its id, its ranges and write-timestamp bases, and
 * whether it is the replay of a batch a crash left open.
 */
record PlannedBatch(long id, BatchOffsets offsets, boolean replay) {
}
