package io.oncestream.engine.config;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.RecordFormat;
import io.oncestream.contract.RestartMode;
import io.oncestream.contract.StartingOffsets;
import io.oncestream.contract.TombstoneMode;

/**
 * What a worker runs: the job configuration the operator writes into the job's ConfigMap as
 * JSON and the worker reads with {@link JobConfigs#parse}. The schema is documented in
 * {@code docs/worker.md} (its table of fields and defaults is checked against this record);
 * every field name here is part of that contract.
 *
 * @param jobId       stable identity of the job ({@code namespace/name}); stored in the checkpoint
 * @param source      where records come from
 * @param format      how record values are decoded before the filter and columns see them
 * @param filter      CEL expression that keeps a record when true; null or blank keeps all
 * @param tombstones  what a record with a null value does (it skips the filter)
 * @param sink        where rows go
 * @param deadLetter  what happens to records that cannot be decoded or mapped
 * @param trigger     when batches run
 * @param checkpoint  checkpoint retention
 * @param parallelism number of workers; partitions are split among them
 * @param restart     what a worker does after a permanent failure
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record JobConfig(
        String jobId,
        KafkaSource source,
        RecordFormat format,
        String filter,
        TombstoneMode tombstones,
        CassandraSink sink,
        DeadLetter deadLetter,
        Trigger trigger,
        Checkpoint checkpoint,
        int parallelism,
        Restart restart) {

    /** The same job with these Kafka client properties instead (e.g. with a Secret's added). */
    public JobConfig withKafkaProperties(Map<String, String> properties) {
        KafkaSource s = source;
        return new JobConfig(jobId, new KafkaSource(s.bootstrapServers(), s.topics(), s.startingOffsets(),
                s.maxRecordsPerBatch(), s.failOnDataLoss(), s.groupId(), Map.copyOf(properties)),
                format, filter, tombstones, sink, deadLetter, trigger, checkpoint, parallelism, restart);
    }

    /** The same job with {@code workers} workers. */
    public JobConfig withParallelism(int workers) {
        return new JobConfig(jobId, source, format, filter, tombstones, sink, deadLetter, trigger, checkpoint, workers, restart);
    }

    /** Kafka source settings. */
    public record KafkaSource(
            String bootstrapServers,
            List<String> topics,
            StartingOffsets startingOffsets,
            int maxRecordsPerBatch,
            boolean failOnDataLoss,
            String groupId,
            Map<String, String> properties) {
    }

    /** Cassandra sink settings; {@code columns} maps each column to a CEL expression. */
    public record CassandraSink(
            List<String> contactPoints,
            String localDatacenter,
            String keyspace,
            String table,
            String consistency,
            Map<String, String> columns,
            int maxInFlight,
            int maxBatchRows,
            int maxBatchPartitions,
            int maxBatchBytes) {
    }

    /**
     * Bad records: {@code mode = TABLE} writes them to {@code keyspace.table} keyed by
     * (topic, partition, offset), with a raw key or value longer than {@code maxValueBytes}
     * cut to that length (the error says so); {@code mode = FAIL} stops the job with the record named.
     */
    public record DeadLetter(DeadLetterMode mode, String table, int maxValueBytes) {
    }

    /** {@code availableNow}: drain what exists at start, then stop; otherwise run every {@code intervalMs}. */
    public record Trigger(long intervalMs, boolean availableNow) {
    }

    /**
     * After a permanent failure: {@code NEVER} stay failed until a person acts; {@code BACKOFF}
     * start again after a pause that doubles from 10 s up to {@code maxBackoffMs}.
     */
    public record Restart(RestartMode onFailure, long maxBackoffMs) {
    }

    /** How many committed batches the offset and commit logs keep. */
    public record Checkpoint(int retainBatches) {
    }
}
