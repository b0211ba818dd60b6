package io.oncestream.operator.status;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;

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
        CheckpointSeal barrier,
        LagReport lag,
        Rates rates) {

    private static final ObjectMapper JSON = new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /**
     * The reported state as this build knows it, or null for a state a newer worker added (it is
     * still shown as reported, and counts as neither failed nor working).
     */
    public EngineState engineState() {
        if (state == null) {
            return null;
        }
        try {
            return EngineState.valueOf(state);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether the worker reports {@code expected}. */
    public boolean is(EngineState expected) {
        return engineState() == expected;
    }

    /** Offsets of one {@code topic-partition}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Partition(long committed, long latest) {
    }

    /** Counts of the worker's checkpoint since the job started. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Totals(long read, long filteredOut, long written, long deadLettered) {
    }

    /** Processing speed of the last committed batch (records per second of its own duration). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record LastBatch(double inputRecordsPerSecond, double writtenRowsPerSecond) {
    }

    /**
     * The job's lag as the worker's probe saw it (absent from workers older than the probe).
     * Two reports with the same figures are equal whenever they were read: an idle job's answers
     * stay the same from poll to poll, so it is not reconciled for nothing (ProgressWatch).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record LagReport(String observedAt, Map<String, PartitionLag> partitions) {

        @Override
        public boolean equals(Object other) {
            return other instanceof LagReport r && java.util.Objects.equals(partitions, r.partitions);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(partitions);
        }
    }

    /** One partition's lag; {@code exact} when the worker owns it (committed offset from its checkpoint). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PartitionLag(long committed, long latest, long records, long ageMs, boolean exact) {
    }

    /**
     * Rates over the last {@code windowSeconds}; a rate is null until a second has passed. Kept
     * to a tenth (the status shows whole numbers), so that a rate that has not changed does not
     * make an answer differ.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Rates(int windowSeconds, Double inputRecordsPerSecond, Double writtenRowsPerSecond,
            Double incomingRecordsPerSecond) {

        public Rates {
            inputRecordsPerSecond = tenth(inputRecordsPerSecond);
            writtenRowsPerSecond = tenth(writtenRowsPerSecond);
            incomingRecordsPerSecond = tenth(incomingRecordsPerSecond);
        }

        private static Double tenth(Double v) {
            return v == null ? null : Math.round(v * 10) / 10.0;
        }
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
