package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobSpec;
import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.Durations;
import io.oncestream.contract.JobDefaults;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * The worker configuration (the engine's {@link JobConfig}, one schema for both) of a
 * StreamJob. What the spec leaves unset the worker's parser fills from {@link JobDefaults},
 * which the CRD's defaults are, so a spec read before the API server defaulted it maps the
 * same. Credentials never enter it: they reach the workers through Secrets.
 */
public final class WorkerJobConfigs {

    /**
     * Filters and columns already compiled, with the error they gave (null if none): jobs made
     * from one template share their expressions, and compiling CEL is most of a first reconcile.
     */
    private static final Map<String, Optional<InvalidConfigException>> COMPILED = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Optional<InvalidConfigException>> eldest) {
                    return size() > 1024;
                }
            });

    private WorkerJobConfigs() {
    }

    /**
     * The configuration, checked as the worker will check it; an error names the spec field
     * ({@code spec.sink.cassandra.columns.amount}).
     */
    public static JobConfig from(StreamJob job) {
        StreamJobSpec spec = job.getSpec();
        StreamJobSpec.KafkaSource kafka = spec.source.kafka;
        StreamJobSpec.CassandraSink cassandra = spec.sink.cassandra;
        StreamJobSpec.DeadLetter deadLetter = spec.deadLetter;
        StreamJobSpec.Trigger trigger = spec.trigger;
        String jobId = StreamJobResources.jobId(job.getMetadata().getNamespace(), job.getMetadata().getName());
        JobConfig config = new JobConfig(
                jobId,
                new JobConfig.KafkaSource(kafka.bootstrapServers, List.copyOf(kafka.topics),
                        kafka.startingOffsets,
                        orDefault(kafka.maxRecordsPerBatch, JobDefaults.MAX_RECORDS_PER_BATCH),
                        orDefault(kafka.failOnDataLoss, JobDefaults.FAIL_ON_DATA_LOSS),
                        null,
                        kafka.properties == null ? Map.of() : new LinkedHashMap<>(kafka.properties)),
                spec.format,
                spec.filter,
                spec.tombstones,
                new JobConfig.CassandraSink(List.copyOf(cassandra.contactPoints), cassandra.localDatacenter,
                        cassandra.keyspace, cassandra.table,
                        cassandra.consistency == null ? null : cassandra.consistency.name(),
                        new LinkedHashMap<>(cassandra.columns), JobDefaults.MAX_IN_FLIGHT, JobDefaults.MAX_BATCH_ROWS,
                        JobDefaults.MAX_BATCH_PARTITIONS, JobDefaults.MAX_BATCH_BYTES),
                new JobConfig.DeadLetter(deadLetter == null ? null : deadLetter.mode,
                        deadLetter != null && deadLetter.mode == DeadLetterMode.TABLE ? deadLetter.table : null,
                        JobDefaults.DEAD_LETTER_MAX_VALUE_BYTES),
                new JobConfig.Trigger(millis(trigger == null ? null : trigger.interval, JobDefaults.TRIGGER_INTERVAL,
                        "spec.trigger.interval"),
                        availableNow(spec)),
                new JobConfig.Checkpoint(orDefault(spec.checkpoint == null ? null : spec.checkpoint.retainBatches,
                        JobDefaults.RETAIN_BATCHES)),
                orDefault(spec.parallelism, JobDefaults.PARALLELISM),
                new JobConfig.Restart(spec.restartPolicy == null ? null : spec.restartPolicy.onFailure,
                        millis(spec.restartPolicy == null ? null : spec.restartPolicy.maxBackoff, JobDefaults.RESTART_MAX_BACKOFF,
                                "spec.restartPolicy.maxBackoff")));
        try {
            // Round-trip through the worker's own parser: the same checks, the same defaults.
            JobConfig checked = JobConfigs.parse(JobConfigs.toJson(config));
            checkExpressions(checked); // CEL that does not compile is a ConfigValid error, not a worker crash
            return checked;
        } catch (InvalidConfigException e) {
            throw new InvalidConfigException(specField(e.field()), e.reason());
        }
    }

    /** Compiles the filter and columns as the worker will, once per distinct set of expressions. */
    private static void checkExpressions(JobConfig config) {
        StringBuilder key = new StringBuilder().append(config.format()).append('|');
        append(key, config.filter());
        config.sink().columns().forEach((column, expression) -> append(append(key, column), expression));
        Optional<InvalidConfigException> error = COMPILED.get(key.toString());
        if (error == null) { // compiled outside the lock: two threads may both compile new expressions, none waits
            try {
                RecordTransformer.compile(config);
                error = Optional.empty();
            } catch (InvalidConfigException e) {
                error = Optional.of(e);
            }
            COMPILED.put(key.toString(), error);
        }
        if (error.isPresent()) {
            throw new InvalidConfigException(error.get().field(), error.get().reason());
        }
    }

    /** Appends a string with its length, so that no two lists of strings make the same key. */
    private static StringBuilder append(StringBuilder key, String part) {
        return part == null ? key.append("-|") : key.append(part.length()).append(':').append(part).append('|');
    }

    /** {@code 1m30s} in milliseconds; null is {@code defaultDuration}; an error names {@code field}. */
    private static long millis(String duration, String defaultDuration, String field) {
        String text = duration == null ? defaultDuration : duration;
        if (!Durations.isDuration(text)) {
            throw new InvalidConfigException(field, Durations.notADuration(text));
        }
        return Durations.millis(text);
    }

    /** The spec field a worker-config field comes from. */
    static String specField(String workerField) {
        List<String[]> map = new ArrayList<>(List.of(
                new String[] {"source.", "spec.source.kafka."},
                new String[] {"sink.", "spec.sink.cassandra."},
                new String[] {"deadLetter.", "spec.deadLetter."},
                new String[] {"trigger.", "spec.trigger."},
                new String[] {"checkpoint.", "spec.checkpoint."},
                new String[] {"filter", "spec.filter"},
                new String[] {"tombstones", "spec.tombstones"},
                new String[] {"parallelism", "spec.parallelism"},
                new String[] {"restart.maxBackoffMs", "spec.restartPolicy.maxBackoff"},
                new String[] {"restart.", "spec.restartPolicy."},
                new String[] {"format", "spec.format"}));
        for (String[] pair : map) {
            if (workerField.startsWith(pair[0])) {
                return pair[1] + workerField.substring(pair[0].length());
            }
        }
        return "spec." + workerField;
    }

    private static <T> T orDefault(T value, T fallback) {
        return value == null ? fallback : value;
    }

    /** Whether the job drains what its topics hold and completes: its {@code trigger.availableNow}, or the default. */
    static boolean availableNow(StreamJobSpec spec) {
        return spec.trigger != null && spec.trigger.availableNow != null ? spec.trigger.availableNow : JobDefaults.AVAILABLE_NOW;
    }
}
