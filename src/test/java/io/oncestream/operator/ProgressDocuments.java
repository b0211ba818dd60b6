package io.oncestream.operator;

import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.operator.status.WorkerProgress;

/** {@code GET /progress} documents exactly as a worker serves them: the engine's own Progress record, serialised. */
public final class ProgressDocuments {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ProgressDocuments() {
    }

    /**
     * Worker {@code index} (0 or 1) of a healthy two-worker job {@code jobId} on topic
     * {@code orders}: worker 0 IDLE after batch 12 at 500 of 520, worker 1 WRITING after batch
     * 11 at 480 of 480. Together: batch 11, lag 20, 2,000 read, 2,000 records/s in their last batches,
     * 501 records/s read and 400 rows/s written over the last minute, 300 records/s arriving.
     */
    public static String healthy(String jobId, int index) {
        return index == 0
                ? json(jobId, 0, EngineState.IDLE, 12, Map.of("orders-0", new long[] {500, 520}), true, null)
                : json(jobId, 1, EngineState.WRITING, 11, Map.of("orders-1", new long[] {480, 480}), true, null);
    }

    /**
     * What worker {@code workerIndex} of a two-worker job {@code jobId} serves; partitions:
     * {@code topic-partition} → {committed, latest}.
     */
    public static String json(String jobId, int workerIndex, EngineState state, long batchId, Map<String, long[]> partitions,
            boolean sinkAvailable, String error) {
        return json(jobId, workerIndex, state, batchId, partitions, sinkAvailable, error, 0, null);
    }

    /** A worker at its barrier: its checkpoint sealed for {@code nextEpoch} at its committed offsets (timestamps 1000 + offset). */
    public static String sealed(String jobId, int workerIndex, long batchId, Map<String, long[]> partitions, int nextEpoch) {
        Map<String, ChainPoint> points = new TreeMap<>();
        partitions.forEach((p, v) -> points.put(p, new ChainPoint(v[0], 1000 + v[0])));
        return json(jobId, workerIndex, EngineState.AT_BARRIER, batchId, partitions, true, null, nextEpoch - 1,
                new CheckpointSeal(nextEpoch, batchId, points, 0));
    }

    /** As {@link #json(String, int, EngineState, long, Map, boolean, String)}, in epoch {@code epoch}, sealed or not. */
    public static String json(String jobId, int workerIndex, EngineState state, long batchId, Map<String, long[]> partitions,
            boolean sinkAvailable, String error, int epoch, CheckpointSeal seal) {
        Map<String, Progress.PartitionProgress> parts = new TreeMap<>();
        partitions.forEach((k, v) -> parts.put(k, new Progress.PartitionProgress(v[0], v[1], null, null)));
        Progress p = new Progress(jobId, workerIndex, 2, state.name(), batchId, null, parts,
                new Progress.Totals(1000, 100, 850, 50, 0, batchId + 1),
                new Progress.BatchFigures(batchId, false, 100, 10, 85, 5, Map.of("total", 100L), 1000.0, 850.0),
                sinkAvailable, true, error, "2026-12-02T10:00:00Z", epoch, seal, null,
                new Progress.Rates(60, 250.4, 200.2, 300.0));
        try {
            return JSON.writeValueAsString(p);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A worker's document with the lag its probe saw at {@code observedAt}: per
     * {@code topic-partition}, {committed, latest, age in ms, 1 if the worker owns it}; an age of
     * -1 is one the probe did not read (oldestRecordMs null with records behind).
     */
    public static WorkerProgress withLag(int workerIndex, EngineState state, long batchId, Map<String, long[]> own,
            String observedAt, Map<String, long[]> lag) {
        Map<String, Progress.PartitionProgress> parts = new TreeMap<>();
        own.forEach((k, v) -> parts.put(k, new Progress.PartitionProgress(v[0], v[1], null, null)));
        Map<String, Progress.PartitionLag> byPartition = new TreeMap<>();
        lag.forEach((k, v) -> byPartition.put(k, new Progress.PartitionLag(v[0], v[1], Math.max(0, v[1] - v[0]),
                v[1] <= v[0] || v[2] < 0 ? null : 1_000_000L, Math.max(0, v[2]), v[3] == 1)));
        Progress p = new Progress("shop/paid-orders", workerIndex, 2, state.name(), batchId, null, parts,
                new Progress.Totals(1000, 100, 850, 50, 0, batchId + 1), null, true, true, null, observedAt, 0, null,
                new Progress.LagReport(observedAt, byPartition), new Progress.Rates(60, 100.0, 90.0, 120.0));
        try {
            return WorkerProgress.parse(JSON.writeValueAsString(p));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Worker {@code workerIndex} of shop/paid-orders, as the operator parses it. */
    public static WorkerProgress parsed(int workerIndex, EngineState state, long batchId, Map<String, long[]> partitions,
            boolean sinkAvailable, String error) {
        return WorkerProgress.parse(json("shop/paid-orders", workerIndex, state, batchId, partitions, sinkAvailable, error));
    }
}
