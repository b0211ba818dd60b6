package io.oncestream.engine.checkpoint;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.RecordTotals;

/**
 * A job's savepoint: where every partition's chain stood when all workers of epoch
 * {@code epoch - 1} had sealed their checkpoints at a barrier, and the shape epoch
 * {@code epoch} starts with. The operator makes it from the workers' seals and keeps it in an
 * immutable ConfigMap; each worker of the new epoch seeds its checkpoint from it and keeps a
 * copy ({@code epoch-<e>/savepoint}). Same file format as the checkpoint's ({@code v1} + JSON).
 *
 * @param jobId            the job it belongs to; a worker of another job refuses it
 * @param epoch            the epoch it starts (1 or more)
 * @param fromParallelism  workers of the epoch that sealed
 * @param toParallelism    workers of the epoch it starts
 * @param partitions       per {@code topic-partition}: next offset and last chain timestamp
 * @param lastBatches      per worker of the old epoch, in index order: its last committed batch, -1 for none
 * @param totals           the job's counts when the old epoch ended (the seals' summed), which worker
 *                         0 of the new epoch carries on; null in savepoints written before the field existed
 */
public record Savepoint(String jobId, int epoch, int fromParallelism, int toParallelism, Map<String, ChainPoint> partitions,
        List<Long> lastBatches, @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) RecordTotals totals) {

    /** A savepoint without totals, as builds before them wrote. */
    public Savepoint(String jobId, int epoch, int fromParallelism, int toParallelism, Map<String, ChainPoint> partitions,
            List<Long> lastBatches) {
        this(jobId, epoch, fromParallelism, toParallelism, partitions, lastBatches, null);
    }

    public Savepoint {
        partitions = new TreeMap<>(partitions);
        lastBatches = List.copyOf(lastBatches);
        if (epoch < 1 || fromParallelism < 1 || toParallelism < 1 || lastBatches.size() != fromParallelism) {
            throw new IllegalArgumentException("not a savepoint: epoch " + epoch + ", " + fromParallelism + " -> " + toParallelism
                    + " workers, last batches " + lastBatches);
        }
    }

    /**
     * The savepoint of epoch {@code epoch} from the seals of every worker of the epoch before, in
     * index order.
     *
     * @throws IllegalArgumentException if a seal is for another epoch or two seals name the same partition
     */
    public static Savepoint of(String jobId, int epoch, int toParallelism, List<CheckpointSeal> seals) {
        Map<String, ChainPoint> partitions = new TreeMap<>();
        List<Long> lastBatches = new java.util.ArrayList<>();
        RecordTotals totals = null;
        for (int i = 0; i < seals.size(); i++) {
            CheckpointSeal seal = seals.get(i);
            if (seal.totals() != null) {
                totals = seal.totals().plus(totals);
            }
            if (seal.nextEpoch() != epoch) {
                throw new IllegalArgumentException("worker " + i + " sealed for epoch " + seal.nextEpoch() + ", not " + epoch);
            }
            for (Map.Entry<String, ChainPoint> e : seal.partitions().entrySet()) {
                if (partitions.putIfAbsent(e.getKey(), e.getValue()) != null) {
                    throw new IllegalArgumentException("partition " + e.getKey() + " is in the seals of two workers (the second is"
                            + " worker " + i + "): the workers did not share the partitions out");
                }
            }
            lastBatches.add(seal.batchId());
        }
        return new Savepoint(jobId, epoch, seals.size(), toParallelism, partitions, lastBatches, totals);
    }

    /**
     * Whether old worker {@code index} had committed no batch in its epoch when it sealed. Its
     * partitions that are in the savepoint (it sealed the points it was seeded with) go on from
     * there; the others never started a chain and start by {@code startingOffsets}.
     */
    public boolean committedNothing(int index) {
        return lastBatches.get(index) < 0;
    }

    public String encode() {
        return new String(CheckpointJson.encode(this), StandardCharsets.UTF_8);
    }

    /** Decodes a savepoint read from {@code source}; a damaged one is an error naming it. */
    public static Savepoint decode(Path source, String text) {
        return CheckpointJson.decode(source, text.getBytes(StandardCharsets.UTF_8), Savepoint.class);
    }
}
