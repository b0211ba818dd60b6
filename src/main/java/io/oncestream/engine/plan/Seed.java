package io.oncestream.engine.plan;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

import io.oncestream.contract.ChainPoint;

/**
 * How a checkpoint seeded from a savepoint plans its first batch (docs/protocol.md §11): each
 * partition of {@code partitions} starts at its offset with its last timestamp as the base, so
 * its chain goes on where its old owner left it; a partition not in it starts by the job's
 * {@code startingOffsets} where {@code startsFromStartingOffsets} says so (its old owner had
 * committed nothing), else at the earliest offset (a partition added since the savepoint).
 *
 * @param partitions the savepoint's entries of the partitions this worker owns
 */
public record Seed(Map<String, ChainPoint> partitions, Predicate<String> startsFromStartingOffsets) {

    public Seed {
        partitions = new TreeMap<>(partitions);
    }
}
