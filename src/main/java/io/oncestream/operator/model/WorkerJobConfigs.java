package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobSpec;
import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.Durations;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * The worker configuration (the engine's {@link JobConfig}, one schema for both) of a
 * StreamJob. What the spec leaves unset the worker's parser fills, from the contract's
 * {@code JobDefaults}, which the CRD's defaults are, so a spec read before the API server
 * defaulted it maps the same. Credentials never enter it: they reach the workers through Secrets.
 */
public final class WorkerJobConfigs {

    /**
     * Filters and columns compiled or being compiled, each with the error it gave (empty if none):
     * jobs made from one template share their expressions, and compiling CEL is most of a first
     * reconcile. One thread compiles each; the others that need the same wait for its answer
     * (after a restart, every reconcile thread started on the same expressions at once, and each
     * compiled them, cold).
     */
    private static final Map<String, FutureTask<Optional<InvalidConfigException>>> COMPILED = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, FutureTask<Optional<InvalidConfigException>>> eldest) {
                    return size() > 1024;
                }
            });
    /** Compilations run, for tests. */
    private static final AtomicLong COMPILATIONS = new AtomicLong();

    private static final ObjectMapper JSON = new ObjectMapper();

    private WorkerJobConfigs() {
    }

    /**
     * The configuration, checked as the worker will check it; an error names the spec field
     * ({@code spec.sink.cassandra.columns.amount}).
     */
    public static JobConfig from(StreamJob job) {
        String document = document(job); // its errors name spec fields already
        try {
            // The worker's own parser: the same checks, and the defaults of what the spec leaves out.
            JobConfig checked = JobConfigs.parse(document);
            checkExpressions(checked); // CEL that does not compile is a ConfigValid error, not a worker crash
            return checked;
        } catch (InvalidConfigException e) {
            throw new InvalidConfigException(specField(e.field()), e.reason());
        }
    }

    /**
     * What the spec says, under the worker configuration's names, and nothing else: a field or
     * object the spec leaves out is left out here too, and the worker's parser gives it its
     * default ({@code JobDefaults}), as it does for a configuration file written by hand.
     */
    private static String document(StreamJob job) {
        StreamJobSpec spec = job.getSpec();
        StreamJobSpec.KafkaSource kafka = spec.source.kafka;
        StreamJobSpec.CassandraSink cassandra = spec.sink.cassandra;
        ObjectNode config = JSON.createObjectNode()
                .put("jobId", StreamJobResources.jobId(job));
        config.putObject("source")
                .put("bootstrapServers", kafka.bootstrapServers)
                .putPOJO("topics", List.copyOf(kafka.topics))
                .putPOJO("startingOffsets", kafka.startingOffsets)
                .put("maxRecordsPerBatch", kafka.maxRecordsPerBatch)
                .put("failOnDataLoss", kafka.failOnDataLoss)
                .putPOJO("properties", kafka.properties);
        config.putPOJO("format", spec.format)
                .put("filter", spec.filter)
                .putPOJO("tombstones", spec.tombstones);
        config.putObject("sink")
                .putPOJO("contactPoints", List.copyOf(cassandra.contactPoints))
                .put("localDatacenter", cassandra.localDatacenter)
                .put("keyspace", cassandra.keyspace)
                .put("table", cassandra.table)
                .putPOJO("consistency", cassandra.consistency)
                .putPOJO("columns", new LinkedHashMap<>(cassandra.columns));
        if (spec.deadLetter != null) {
            config.putObject("deadLetter")
                    .putPOJO("mode", spec.deadLetter.mode)
                    .put("table", spec.deadLetter.mode == DeadLetterMode.TABLE ? spec.deadLetter.table : null);
        }
        if (spec.trigger != null) {
            config.putObject("trigger")
                    .put("intervalMs", millis(spec.trigger.interval, "spec.trigger.interval"))
                    .put("availableNow", spec.trigger.availableNow);
        }
        if (spec.checkpoint != null) {
            config.putObject("checkpoint").put("retainBatches", spec.checkpoint.retainBatches);
        }
        config.put("parallelism", spec.parallelism);
        if (spec.restartPolicy != null) {
            config.putObject("restart")
                    .putPOJO("onFailure", spec.restartPolicy.onFailure)
                    .put("maxBackoffMs", millis(spec.restartPolicy.maxBackoff, "spec.restartPolicy.maxBackoff"));
        }
        try {
            return JSON.writeValueAsString(config);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Compiles the filter and columns as the worker will, once per distinct set of expressions. */
    private static void checkExpressions(JobConfig config) {
        StringBuilder key = new StringBuilder().append(config.format()).append('|');
        append(key, config.filter());
        config.sink().columns().forEach((column, expression) -> append(append(key, column), expression));
        String id = key.toString();
        FutureTask<Optional<InvalidConfigException>> known = COMPILED.get(id);
        if (known == null) {
            known = compileOnce(id, config);
        }
        Optional<InvalidConfigException> error;
        try {
            error = known.get();
        } catch (ExecutionException e) {
            COMPILED.remove(id, known); // not an answer to keep: the next check compiles again
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while another reconcile compiled the same expressions", e);
        }
        if (error.isPresent()) {
            throw new InvalidConfigException(error.get().field(), error.get().reason());
        }
    }

    /** The compilation of {@code id}: this thread's, run now, unless another thread's was registered first. */
    private static FutureTask<Optional<InvalidConfigException>> compileOnce(String id, JobConfig config) {
        FutureTask<Optional<InvalidConfigException>> compile = new FutureTask<>(() -> {
            COMPILATIONS.incrementAndGet();
            try {
                RecordTransformer.compile(config);
                return Optional.empty();
            } catch (InvalidConfigException e) {
                return Optional.of(e);
            }
        });
        FutureTask<Optional<InvalidConfigException>> registered = COMPILED.putIfAbsent(id, compile);
        if (registered != null) {
            return registered;
        }
        compile.run();
        return compile;
    }

    /** How many times expressions were compiled since the class was loaded. */
    static long compilations() {
        return COMPILATIONS.get();
    }

    /** Appends a string with its length, so that no two lists of strings make the same key. */
    private static StringBuilder append(StringBuilder key, String part) {
        return part == null ? key.append("-|") : key.append(part.length()).append(':').append(part).append('|');
    }

    /** {@code 1m30s} in milliseconds, or null if the spec sets none; an error names {@code field}. */
    private static Long millis(String duration, String field) {
        if (duration == null) {
            return null;
        }
        if (!Durations.isDuration(duration)) {
            throw new InvalidConfigException(field, Durations.notADuration(duration));
        }
        try {
            return Durations.millis(duration);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigException(field, e.getMessage());
        }
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

}
