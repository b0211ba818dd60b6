package io.oncestream.contract;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A worker's progress, the document of {@code GET /progress} (in the spirit of Spark's
 * {@code StreamingQueryProgress}, documented in docs/worker.md): the worker serves this record as
 * JSON, and the operator reads it back with {@link #parse} and aggregates it into the StreamJob
 * status. Its JSON is a format (a golden file pins it). A reader ignores fields it does not know
 * and keeps a state it does not know as text, so that a newer worker may add either.
 *
 * @param jobId           the job
 * @param workerIndex     this worker's index
 * @param parallelism     number of workers of the job
 * @param state           what the engine is doing now: an {@link EngineState}'s name ({@link #engineState()})
 * @param batchId         last committed batch, -1 before the first commit
 * @param runningBatchId  the batch being run, or null
 * @param partitions      per {@code topic-partition}: committed end, latest offset seen, and the running range
 * @param totals          counts of this worker's checkpoint since the job started (worker 0 of an
 *                        epoch carries on the earlier epochs' counts)
 * @param lastBatch       figures of the last committed batch, or null
 * @param sinkAvailable   false while writes fail and are being retried
 * @param sourceAvailable false while Kafka cannot be reached
 * @param lastError       the most recent error, or null
 * @param updatedAt       ISO-8601 time of this snapshot
 * @param epoch           the epoch the worker runs in (0 until the job's first rescale)
 * @param barrier         the seal of the checkpoint once the worker stopped at a barrier, else null
 * @param lag             the lag of every partition of the job, as the worker's probe last saw it
 *                        (its own partitions exactly, the others from the job's group offsets), or
 *                        null before its first probe
 * @param rates           rates over the last {@code windowSeconds} of wall-clock time
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Progress(
        String jobId,
        int workerIndex,
        int parallelism,
        String state,
        long batchId,
        Long runningBatchId,
        Map<String, PartitionProgress> partitions,
        Totals totals,
        BatchFigures lastBatch,
        boolean sinkAvailable,
        boolean sourceAvailable,
        String lastError,
        String updatedAt,
        int epoch,
        CheckpointSeal barrier,
        LagReport lag,
        Rates rates) {

    private static final ObjectMapper READER = new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** Reads a document a worker served; an {@link IllegalArgumentException} says what is wrong with it. */
    public static Progress parse(String json) {
        try {
            return READER.readValue(json, Progress.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a worker progress document: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * The reported state as this build knows it, or null for a state a newer worker added (it is
     * still shown as reported, and counts as neither failed nor working).
     */
    public EngineState engineState() {
        return EngineState.ofReported(state);
    }

    /**
     * @param observedAt   ISO-8601 time of the probe
     * @param partitions   per {@code topic-partition}
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record LagReport(String observedAt, Map<String, PartitionLag> partitions) {
    }

    /**
     * @param committed      next offset the job applies
     * @param latest         last stable offset in Kafka
     * @param records        {@code latest - committed}
     * @param oldestRecordMs Kafka timestamp of the record at {@code committed}, null if none is behind or unknown
     * @param ageMs          age of that record now: 0 when none is behind, and 0 too when it is not
     *                       known ({@code records} above 0 with {@code oldestRecordMs} null: the
     *                       probe could not read that record in time), which a reader must take as
     *                       unknown, not as 0
     * @param exact          true for this worker's own partitions (committed from its checkpoint),
     *                       false for the others (committed from the job's consumer group)
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PartitionLag(long committed, long latest, long records, Long oldestRecordMs, long ageMs, boolean exact) {
    }

    /**
     * Per-second averages over the last {@code windowSeconds} (or since the worker started, when
     * younger); null before a second has passed.
     *
     * @param inputRecordsPerSecond    records this worker read from Kafka
     * @param writtenRowsPerSecond     rows this worker wrote to the sink table
     * @param incomingRecordsPerSecond growth of the end offsets of all the job's partitions (records
     *                                 arriving in Kafka, transaction markers included)
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Rates(int windowSeconds, Double inputRecordsPerSecond, Double writtenRowsPerSecond,
            Double incomingRecordsPerSecond) {
    }

    /**
     * @param committed offset after the last committed record
     * @param latest    latest (last stable) offset when last planned
     * @param start     running batch's first offset, or null
     * @param end       running batch's end offset, or null
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PartitionProgress(long committed, long latest, Long start, Long end) {
    }

    /** Counts of the checkpoint since the job started ({@code lostRecords} and {@code batches}: since the worker started). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Totals(long read, long filteredOut, long written, long deadLettered, long lostRecords, long batches) {
    }

    /** Figures of one committed batch; durations in milliseconds. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record BatchFigures(long batchId, boolean replayed, long read, long filteredOut, long written, long deadLettered,
            Map<String, Long> durationsMs, double inputRecordsPerSecond, double writtenRowsPerSecond) {
    }
}
