package io.oncestream.contract;

import java.util.Map;
import java.util.TreeMap;

/**
 * {@code sealed}: the epoch of this checkpoint ended at a barrier, after batch {@code batchId}
 * was committed. Written create-only and durable before the worker reports it in
 * {@code /progress}, whence the operator gathers every worker's seal into the savepoint of the
 * next epoch; a worker that finds it never plans again in this directory (docs/protocol.md §11,
 * invariant I9).
 *
 * @param nextEpoch  the epoch whose savepoint this seal is part of
 * @param batchId    the last committed batch, -1 if the worker committed none
 * @param partitions per {@code topic-partition} of the last batch: its end and the last timestamp of its chain
 * @param sealedAtMs wall-clock time of the seal
 * @param totals     the checkpoint's counts since the job started (see {@link RecordTotals}); null in
 *                   seals written before the field existed
 */
public record CheckpointSeal(int nextEpoch, long batchId, Map<String, ChainPoint> partitions, long sealedAtMs,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) RecordTotals totals) {

    public CheckpointSeal {
        partitions = new TreeMap<>(partitions);
    }

    /** A seal without totals, as builds before them wrote. */
    public CheckpointSeal(int nextEpoch, long batchId, Map<String, ChainPoint> partitions, long sealedAtMs) {
        this(nextEpoch, batchId, partitions, sealedAtMs, null);
    }
}
