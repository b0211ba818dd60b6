package io.oncestream.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.model.annotation.LabelSelector;
import io.fabric8.kubernetes.model.annotation.StatusReplicas;

/** What the operator observed of a StreamJob: a projection of its workers' progress. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StreamJobStatus {

    @JsonPropertyDescription("The spec generation this status describes.")
    public Long observedGeneration;

    @JsonPropertyDescription("Pending, Running, Degraded, Rescaling, Suspended, Completed or Failed.")
    public Phase phase;

    @JsonPropertyDescription("Ready, Progressing, ConfigValid, SinkAvailable, SourceAvailable, Rescaling and Stalled.")
    public List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Last batch committed by every worker (the lowest of the workers' batch ids).")
    public Long batchId;

    @JsonPropertyDescription("Committed offset per topic and partition.")
    public Map<String, Map<String, Long>> committedOffsets;

    @JsonPropertyDescription("Records in Kafka the job has not committed yet (last stable offsets minus committed offsets),"
            + " summed over all partitions; read from Kafka every few seconds, whatever the workers do.")
    public Long lag;

    @JsonPropertyDescription("Age in seconds of the oldest record the job has not committed yet (0 when nothing is behind;"
            + " absent while the time of a partition's oldest record is not known yet, as in a new worker's first seconds).")
    public Long lagSeconds;

    @JsonPropertyDescription("Records not committed yet per topic and partition.")
    public Map<String, Map<String, Long>> partitionLag;

    @JsonPropertyDescription("Throughput, averaged over the last windowSeconds of wall-clock time.")
    public Rates rates;

    @JsonPropertyDescription("Record counts since the job started, from its checkpoints (kept through restarts and rescales).")
    public Totals totals;

    @JsonPropertyDescription("The job's epoch: 0 until its first rescale, one more after each.")
    public Integer epoch;

    @StatusReplicas
    @JsonPropertyDescription("Number of workers of the job's current shape (the scale subresource's status replicas).")
    public Integer replicas;

    @LabelSelector
    @JsonPropertyDescription("Label selector of the job's worker pods (for the scale subresource and autoscalers).")
    public String selector;

    @JsonPropertyDescription("One entry per worker.")
    public List<WorkerStatus> workers;

    @JsonPropertyDescription("The autoscaler's state and last decision (spec.autoscaling).")
    public Autoscaler autoscaler;

    /** The condition of this type, if the status has one. */
    @JsonIgnore
    public Optional<Condition> condition(ConditionType type) {
        return conditions == null ? Optional.empty()
                : conditions.stream().filter(c -> type.name().equals(c.type)).findFirst();
    }

    /** The job's overall state. */
    public enum Phase { Pending, Running, Degraded, Rescaling, Suspended, Completed, Failed }

    /** Throughput. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Rates {
        @JsonPropertyDescription("The window the rates are averaged over, in seconds.")
        public Integer windowSeconds;

        @JsonPropertyDescription("Records the job read from Kafka per second.")
        public Long inputRecordsPerSecond;

        @JsonPropertyDescription("Rows the job wrote to Cassandra per second.")
        public Long writtenRowsPerSecond;

        @JsonPropertyDescription("Records arriving in the job's topics per second (growth of their end offsets).")
        public Long incomingRecordsPerSecond;

        @JsonPropertyDescription("Processing speed: records per second of batch time in the workers' last batches, summed"
                + " (what the job could read if batches ran back to back).")
        public Long batchRecordsPerSecond;
    }

    /** Counts. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Totals {
        @JsonPropertyDescription("Records read.")
        public Long read;

        @JsonPropertyDescription("Records the filter dropped.")
        public Long filteredOut;

        @JsonPropertyDescription("Rows written.")
        public Long written;

        @JsonPropertyDescription("Records written to the dead-letter table.")
        public Long deadLettered;
    }

    /** The lag-driven autoscaler. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Autoscaler {
        @JsonPropertyDescription("The number of workers the autoscaler chose: what the job runs with.")
        public Integer parallelism;

        @JsonPropertyDescription("spec.parallelism when the autoscaler last looked (a change of it sets parallelism again).")
        public Integer specParallelism;

        @JsonPropertyDescription("Estimated records per second one worker can read (from its batches' speed, batch size and"
                + " trigger interval).")
        public Long capacityPerWorker;

        @JsonPropertyDescription("Since when the lag has been above target (RFC 3339), while it is.")
        public String lagAboveTargetSince;

        @JsonPropertyDescription("Since when fewer workers would have been enough (RFC 3339), while they would.")
        public String fewerWouldDoSince;

        @JsonPropertyDescription("When the autoscaler last changed the number of workers (RFC 3339).")
        public String lastScaleTime;

        @JsonPropertyDescription("Rescales the autoscaler started.")
        public Integer rescales;

        @JsonPropertyDescription("What it decided last, and why.")
        public String lastDecision;
    }

    /** One worker. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class WorkerStatus {
        @JsonPropertyDescription("Pod name.")
        public String name;

        @JsonPropertyDescription("Whether the pod is ready.")
        public Boolean ready;

        @JsonPropertyDescription("What the worker's engine is doing.")
        public String state;

        @JsonPropertyDescription("Last batch this worker committed.")
        public Long batchId;

        @JsonPropertyDescription("The topic-partitions this worker reads.")
        public List<String> partitions;

        @JsonPropertyDescription("The worker's most recent error, if any.")
        public String lastError;
    }
}
