package io.oncestream.api;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.model.annotation.SpecReplicas;
import io.fabric8.generator.annotation.ValidationRule;

import io.oncestream.contract.Consistency;
import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.JobDefaults;
import io.oncestream.contract.RecordFormat;
import io.oncestream.contract.RestartMode;
import io.oncestream.contract.StartingOffsets;
import io.oncestream.contract.TombstoneMode;
import io.oncestream.contract.ValidationPatterns;

/** What a StreamJob runs. Every field is described for {@code kubectl explain streamjob.spec}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// On spec, not on the field: a job stored without spec.checkpoint has ReadWriteOnce claims too.
@ValidationRule(value = "(has(oldSelf.checkpoint) && has(oldSelf.checkpoint.accessMode) ? oldSelf.checkpoint.accessMode"
        + " : 'ReadWriteOnce') == (has(self.checkpoint) && has(self.checkpoint.accessMode) ? self.checkpoint.accessMode"
        + " : 'ReadWriteOnce')", fieldPath = ".checkpoint.accessMode",
        message = "cannot change on an existing job: the checkpoint volume claims keep the access mode they were made"
                + " with (delete the job and its claims to start over)")
public class StreamJobSpec {

    @Required
    @JsonPropertyDescription("Where records come from.")
    public Source source;

    @Default(JobDefaults.FORMAT)
    @JsonPropertyDescription("How record values are decoded before the filter and columns see them: json or string.")
    public RecordFormat format;

    @JsonPropertyDescription("CEL expression over key, value, headers, topic, partition, offset and timestamp; a record is "
            + "kept when it is true. Empty keeps every record. Example: value.status == 'PAID' && value.amount > 100.0. One that "
            + "does not compile, or is not boolean, is refused at apply by the operator's admission webhook.")
    public String filter;

    @Default(JobDefaults.TOMBSTONES)
    @JsonPropertyDescription("Records with a null value (Kafka tombstones, as on compacted topics), which skip the filter: "
            + "ignore (nothing is written; counted as filtered out), delete (the row whose primary key the columns map from "
            + "the record's key is deleted, with the record's write timestamp, so a replay stays invisible and a later "
            + "upsert wins) or deadLetter (a bad record, as deadLetter.mode says).")
    public TombstoneMode tombstones;

    @Required
    @JsonPropertyDescription("Where rows go.")
    public Sink sink;

    @JsonPropertyDescription("What happens to records that cannot be decoded or mapped.")
    public DeadLetter deadLetter;

    @JsonPropertyDescription("When batches run.")
    public Trigger trigger;

    @Default("" + JobDefaults.PARALLELISM)
    @Min(1)
    @Max(256)
    @SpecReplicas
    @JsonPropertyDescription("Number of workers; Kafka partitions are split among them. Changing it rescales the job: its"
            + " workers stop at a batch boundary, the operator takes a savepoint, and the new number of workers continue"
            + " from it exactly once (also by kubectl scale streamjob/NAME --replicas=N).")
    public Integer parallelism;

    @JsonPropertyDescription("Lets the operator choose the number of workers from the job's lag (docs/operator.md,"
            + " Autoscaling): up when the oldest record not committed stays older than targetLagSeconds, down when the"
            + " workers would keep up with fewer, within [minParallelism, maxParallelism] and the partition count."
            + " parallelism is then where it starts; a change of it sets the number of workers again.")
    public Autoscaling autoscaling;

    @JsonPropertyDescription("The workers' checkpoint volumes.")
    public Checkpoint checkpoint;

    @Default("false")
    @JsonPropertyDescription("true stops the workers at a batch boundary and keeps their checkpoints; false resumes.")
    public Boolean suspend;

    @JsonPropertyDescription("Worker pod settings.")
    public Worker worker;

    @JsonPropertyDescription("What a worker does after a permanent failure (a bad record with deadLetter.mode fail, a "
            + "corrupt checkpoint, a write Cassandra refuses). Transient failures (Kafka or Cassandra unreachable, the "
            + "checkpoint volume full or its lock held) are always retried.")
    public RestartPolicy restartPolicy;

    /** The lag-driven autoscaler's bounds and pace. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @ValidationRule(value = "self.maxParallelism >= self.minParallelism", message = "maxParallelism must be at least minParallelism")
    public static class Autoscaling {
        @Default("1")
        @Min(1)
        @Max(256)
        @JsonPropertyDescription("Fewest workers.")
        public Integer minParallelism;

        @Required
        @Min(1)
        @Max(256)
        @JsonPropertyDescription("Most workers (never more than the job's partitions).")
        public Integer maxParallelism;

        @Default("60")
        @Min(1)
        @JsonPropertyDescription("Scale up when the oldest record not committed stays older than this (status.lagSeconds).")
        public Integer targetLagSeconds;

        @Default("70")
        @Min(10)
        @Max(100)
        @JsonPropertyDescription("Percent of the workers' capacity the autoscaler sizes for: workers = ceil(records arriving"
                + " per second / (capacity per worker x targetUtilizationPercent / 100)).")
        public Integer targetUtilizationPercent;

        @Default("60")
        @Min(0)
        @JsonPropertyDescription("How long the lag must stay above target before the job scales up.")
        public Integer scaleUpAfterSeconds;

        @Default("300")
        @Min(0)
        @JsonPropertyDescription("How long fewer workers must have been enough before the job scales down.")
        public Integer scaleDownAfterSeconds;

        @Default("300")
        @Min(0)
        @JsonPropertyDescription("After a rescale, none other for this long.")
        public Integer cooldownSeconds;
    }

    /** The source: Kafka. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Source {
        @Required
        @JsonPropertyDescription("Kafka source.")
        public KafkaSource kafka;
    }

    /** The Kafka topics a job reads. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class KafkaSource {
        @Required
        @Pattern(ValidationPatterns.HOST_PORT_LIST)
        @JsonPropertyDescription("Comma-separated host:port list of Kafka brokers.")
        public String bootstrapServers;

        @Required
        @io.fabric8.generator.annotation.Size(min = 1, max = 100)
        @JsonPropertyDescription("Topics to read: Kafka topic names (letters, digits, '.', '_', '-').")
        public java.util.List<@Pattern(ValidationPatterns.TOPIC_NAME) String> topics;

        @Default(JobDefaults.STARTING_OFFSETS)
        @JsonPropertyDescription("Where a job without a checkpoint starts: earliest or latest. New partitions always start "
                + "at earliest.")
        public StartingOffsets startingOffsets;

        @Default("" + JobDefaults.MAX_RECORDS_PER_BATCH)
        @Min(1)
        @Max(10000000)
        @JsonPropertyDescription("Most records in one batch, shared among partitions by backlog.")
        public Integer maxRecordsPerBatch;

        @Default("" + JobDefaults.FAIL_ON_DATA_LOSS)
        @JsonPropertyDescription("Offsets aged out of Kafka before they were read: fail the job (true) or skip and count "
                + "them (false).")
        public Boolean failOnDataLoss;

        @JsonPropertyDescription("Extra Kafka consumer properties (not secrets: use secretRef).")
        public Map<String, String> properties;

        @JsonPropertyDescription("Secret whose keys are added to the consumer properties (SASL/TLS settings).")
        public SecretRef secretRef;
    }

    /** The sink: Cassandra. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Sink {
        @Required
        @JsonPropertyDescription("Cassandra sink.")
        public CassandraSink cassandra;
    }

    /** The Cassandra table a job upserts into. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class CassandraSink {
        @Required
        @io.fabric8.generator.annotation.Size(min = 1, max = 100)
        @JsonPropertyDescription("host:port of Cassandra nodes to connect to first.")
        public java.util.List<@Pattern(ValidationPatterns.HOST_PORT) String> contactPoints;

        @Required
        @JsonPropertyDescription("The driver's local datacenter.")
        public String localDatacenter;

        @Required
        @Pattern(ValidationPatterns.CQL_IDENTIFIER)
        @JsonPropertyDescription("Keyspace of the table.")
        public String keyspace;

        @Required
        @Pattern(ValidationPatterns.CQL_IDENTIFIER)
        @JsonPropertyDescription("Table to upsert into. It must exist; counter tables are refused.")
        public String table;

        @Default(JobDefaults.CONSISTENCY)
        @JsonPropertyDescription("Write consistency level.")
        public Consistency consistency;

        @Required
        @io.fabric8.generator.annotation.Size(min = 1, max = 500)
        @JsonPropertyDescription("Column name to CEL expression, e.g. order_id: value.id. Every primary-key column needs "
                + "one. Names that are not CQL identifiers, and expressions that do not compile, are refused at apply by "
                + "the operator's admission webhook (without it, reported in the ConfigValid condition).")
        public Map<String, String> columns;

        @JsonPropertyDescription("Secret with keys username and password for Cassandra authentication.")
        public SecretRef secretRef;
    }

    /** Bad records. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @ValidationRule(value = "self.mode != 'table' || has(self.table)", message = "table is required when mode is table")
    public static class DeadLetter {
        @Default(JobDefaults.DEAD_LETTER_MODE)
        @JsonPropertyDescription("fail: a bad record stops the job and is named in its status; table: it is written to "
                + "the dead-letter table, keyed by (topic, partition, offset).")
        public DeadLetterMode mode;

        @Pattern(ValidationPatterns.CQL_IDENTIFIER)
        @JsonPropertyDescription("Dead-letter table in the sink's keyspace; created if missing.")
        public String table;
    }

    /** When batches run. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Trigger {
        @Default(JobDefaults.TRIGGER_INTERVAL)
        @Pattern(ValidationPatterns.DURATION)
        @JsonPropertyDescription("Time between batch starts, e.g. 500ms, 1s, 1m.")
        public String interval;

        @Default("" + JobDefaults.AVAILABLE_NOW)
        @JsonPropertyDescription("Drain what the topics hold when the job starts, then complete.")
        public Boolean availableNow;
    }

    /** After a permanent failure: stay failed, or start again with back-off. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class RestartPolicy {
        @Default(JobDefaults.RESTART_ON_FAILURE)
        @JsonPropertyDescription("Never: the job stays Failed with the cause in its status until the spec changes. "
                + "Backoff: the worker starts again after 10 s, doubling each time up to maxBackoff, reporting Failed "
                + "meanwhile.")
        public RestartMode onFailure;

        @Default(JobDefaults.RESTART_MAX_BACKOFF)
        @Pattern(ValidationPatterns.DURATION)
        @JsonPropertyDescription("The longest pause between two starts with onFailure Backoff, e.g. 5m (1s to 24h).")
        public String maxBackoff;
    }

    /** The workers' checkpoint volumes. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Checkpoint {
        /** The volume size when the spec names none (the operator's default, not the worker's). */
        public static final String DEFAULT_SIZE = "1Gi";

        @Default(DEFAULT_SIZE)
        @Pattern("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$")
        @JsonPropertyDescription("Size of each worker's checkpoint volume.")
        public String size;

        @JsonPropertyDescription("Storage class of the checkpoint volumes; the cluster's default if unset.")
        public String storageClassName;

        @Default("ReadWriteOnce")
        @JsonPropertyDescription("Access mode of the checkpoint volume claims: ReadWriteOnce, or ReadWriteOncePod, with "
                + "which the scheduler refuses a second pod on a worker's claim while the API server still has the first "
                + "(not after a force delete); it needs a volume plugin that supports it. The checkpoint's lock file fences "
                + "workers either way. Cannot change once set.")
        public VolumeAccessMode accessMode;

        @Default("" + JobDefaults.RETAIN_BATCHES)
        @Min(1)
        @Max(100000)
        @JsonPropertyDescription("Committed batches kept in the checkpoint logs.")
        public Integer retainBatches;

        @Default("Retain")
        @JsonPropertyDescription("What happens to checkpoint volumes when the job is deleted: Retain or Delete.")
        public VolumeRetention whenDeleted;

        @Default("Retain")
        @JsonPropertyDescription("What happens to the checkpoint volumes of workers a rescale removes: Retain (kept; a later"
                + " scale up reuses one only through the savepoint, in a new epoch, never from its old files) or Delete.")
        public VolumeRetention whenScaled;
    }

    /** Worker pod settings. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Worker {
        @JsonPropertyDescription("Worker image; the operator's default if unset.")
        public String image;

        @JsonPropertyDescription("Compute resources of each worker container.")
        public io.fabric8.kubernetes.api.model.ResourceRequirements resources;

        @JsonPropertyDescription("Node labels a worker pod's node must have (the pod's nodeSelector).")
        public java.util.Map<String, String> nodeSelector;

        @JsonPropertyDescription("Tolerations of the worker pods, for nodes with taints.")
        public java.util.List<io.fabric8.kubernetes.api.model.Toleration> tolerations;

        @JsonPropertyDescription("JVM options of the worker, after the operator's defaults (-XX:MaxRAMPercentage=75 "
                + "-Djava.io.tmpdir=/tmp, raised C2 compile thresholds, -XX:Tier4..., and for availableNow jobs smaller C2 "
                + "inlining limits, -XX:FreqInlineSize=100 -XX:InlineSmallCode=1000; with a memory limit under 640Mi, -Xmx "
                + "the limit less 160Mi unless these options size the heap; see docs/worker.md), so that a later one wins; options only, each starting with '-', separated by "
                + "spaces. Example: -XX:TieredStopAtLevel=1 costs less CPU on availableNow runs of up to about a million "
                + "records and more on longer ones. A change rolls the workers.")
        @Pattern(JVM_OPTIONS_PATTERN)
        @Size(max = 1024)
        public String jvmOptions;

        /** Options only: each starts with '-' and holds no whitespace, one space or more between them. */
        public static final String JVM_OPTIONS_PATTERN = "^(-[^\\s]+)( +-[^\\s]+)*$";
    }

    /** A reference to a Secret in the job's namespace. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class SecretRef {
        @Required
        @JsonPropertyDescription("Name of the Secret.")
        public String name;
    }
}
