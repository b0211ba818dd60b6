package io.oncestream.engine.checkpoint;

import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.ChainPoint;

/**
 * {@code recovered}: the chain points a checkpoint without any batch took from the consumer
 * group, because its volume was lost (docs/protocol.md §8). Written create-only before its
 * first batch is planned, so that a worker that restarts before that batch plans from the same
 * points whatever the group says by then.
 *
 * @param partitions  per {@code topic-partition}: next offset and last chain timestamp
 * @param recoveredAtMs wall-clock time it was taken
 */
public record RecoveredChain(Map<String, ChainPoint> partitions, long recoveredAtMs) {

    public RecoveredChain {
        partitions = new TreeMap<>(partitions);
    }
}
