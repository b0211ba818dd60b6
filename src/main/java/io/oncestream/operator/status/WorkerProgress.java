package io.oncestream.operator.status;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import io.oncestream.engine.checkpoint.CheckpointSeal;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What the operator reads of a worker's {@code GET /progress} (documented in docs/worker.md).
 * Unknown fields are ignored so that workers may add some without breaking the operator.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record WorkerProgress(
        String jobId,
        int workerIndex,
        String state,
        long batchId,
        Map<String, Partition> partitions,
        Totals totals,
        LastBatch lastBatch,
        boolean sinkAvailable,
        boolean sourceAvailable,
        String lastError,
        int epoch,
        CheckpointSeal barrier) {

    private static final ObjectMapper JSON = new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** Offsets of one {@code topic-partition}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Partition(long committed, long latest) {
    }

    /** Counts since the worker started. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Totals(long read, long filteredOut, long written, long deadLettered) {
    }

    /** Rates of the last committed batch. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record LastBatch(double inputRecordsPerSecond, double writtenRowsPerSecond) {
    }

    /** Parses the JSON a worker served; an {@link IllegalArgumentException} says what is wrong with it. */
    public static WorkerProgress parse(String json) {
        try {
            return JSON.readValue(json, WorkerProgress.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a worker progress document: " + e.getOriginalMessage(), e);
        }
    }
}
