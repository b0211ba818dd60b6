package io.oncestream.engine.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.oncestream.contract.Consistency;
import io.oncestream.contract.DeadLetterMode;
import io.oncestream.contract.JobDefaults;
import io.oncestream.contract.ValidationPatterns;

/**
 * Reads, defaults and checks a worker's {@link JobConfig}. Defaults are applied on the JSON
 * tree (to fields that are missing or null) so that the record the engine sees is complete;
 * every error names its field.
 */
public final class JobConfigs {

    private static final Pattern TOPIC_NAME = Pattern.compile(ValidationPatterns.TOPIC_NAME);
    private static final Pattern CQL_IDENTIFIER = Pattern.compile(ValidationPatterns.CQL_IDENTIFIER);
    private static final Pattern HOST_PORT = Pattern.compile(ValidationPatterns.HOST_PORT);

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    private JobConfigs() {
    }

    /** Reads the configuration file; errors name the file and the field. */
    public static JobConfig read(Path file) {
        try {
            return parse(Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new InvalidConfigException(file.toString(), "no such file");
        } catch (IOException e) {
            throw new InvalidConfigException(file.toString(), "cannot read: " + e.getMessage());
        } catch (InvalidConfigException e) {
            throw new InvalidConfigException(e.field(), e.reason() + " (in " + file + ")");
        }
    }

    /** Parses the JSON text of a worker configuration, fills defaults and checks it. */
    public static JobConfig parse(String json) {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidConfigException("(document)", "not valid JSON: " + e.getOriginalMessage());
        }
        if (!(tree instanceof ObjectNode root)) {
            throw new InvalidConfigException("(document)", "must be a JSON object");
        }
        applyDefaults(root);
        JobConfig config;
        try {
            config = MAPPER.treeToValue(root, JobConfig.class);
        } catch (com.fasterxml.jackson.databind.exc.MismatchedInputException e) {
            throw new InvalidConfigException(path(e.getPath()), e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            throw new InvalidConfigException("(document)", e.getOriginalMessage());
        }
        check(config);
        return config;
    }

    /** The configuration as the JSON the worker reads (what the operator puts in the ConfigMap). */
    public static String toJson(JobConfig config) {
        try {
            return MAPPER.writeValueAsString(config);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void applyDefaults(ObjectNode root) {
        ObjectNode source = object(root, "source");
        fill(source, "startingOffsets", source.textNode(JobDefaults.STARTING_OFFSETS));
        fill(source, "maxRecordsPerBatch", source.numberNode(JobDefaults.MAX_RECORDS_PER_BATCH));
        fill(source, "failOnDataLoss", source.booleanNode(JobDefaults.FAIL_ON_DATA_LOSS));
        fill(source, "properties", source.objectNode());
        if (root.hasNonNull("jobId")) {
            fill(source, "groupId", source.textNode(JobDefaults.groupId(root.get("jobId").asText())));
        }
        fill(root, "format", root.textNode(JobDefaults.FORMAT));
        fill(root, "tombstones", root.textNode(JobDefaults.TOMBSTONES));
        ObjectNode sink = object(root, "sink");
        fill(sink, "consistency", sink.textNode(JobDefaults.CONSISTENCY));
        fill(sink, "maxInFlight", sink.numberNode(JobDefaults.MAX_IN_FLIGHT));
        fill(sink, "maxBatchRows", sink.numberNode(JobDefaults.MAX_BATCH_ROWS));
        fill(sink, "maxBatchPartitions", sink.numberNode(JobDefaults.MAX_BATCH_PARTITIONS));
        fill(sink, "maxBatchBytes", sink.numberNode(JobDefaults.MAX_BATCH_BYTES));
        ObjectNode deadLetter = object(root, "deadLetter");
        fill(deadLetter, "mode", deadLetter.textNode(JobDefaults.DEAD_LETTER_MODE));
        fill(deadLetter, "maxValueBytes", deadLetter.numberNode(JobDefaults.DEAD_LETTER_MAX_VALUE_BYTES));
        ObjectNode trigger = object(root, "trigger");
        fill(trigger, "intervalMs", trigger.numberNode(JobDefaults.TRIGGER_INTERVAL_MS));
        fill(trigger, "availableNow", trigger.booleanNode(JobDefaults.AVAILABLE_NOW));
        ObjectNode checkpoint = object(root, "checkpoint");
        fill(checkpoint, "retainBatches", checkpoint.numberNode(JobDefaults.RETAIN_BATCHES));
        fill(root, "parallelism", root.numberNode(JobDefaults.PARALLELISM));
        ObjectNode restart = object(root, "restart");
        fill(restart, "onFailure", restart.textNode(JobDefaults.RESTART_ON_FAILURE));
        fill(restart, "maxBackoffMs", restart.numberNode(JobDefaults.RESTART_MAX_BACKOFF_MS));
    }

    /** Sets a field that is missing or null. */
    private static void fill(ObjectNode node, String field, JsonNode value) {
        if (!node.hasNonNull(field)) {
            node.set(field, value);
        }
    }

    private static ObjectNode object(ObjectNode parent, String field) {
        JsonNode node = parent.get(field);
        if (node == null || node.isNull()) {
            return parent.putObject(field);
        }
        if (!(node instanceof ObjectNode object)) {
            throw new InvalidConfigException(field, "must be an object");
        }
        return object;
    }

    private static void check(JobConfig c) {
        require(c.jobId() != null && !c.jobId().isBlank(), "jobId", "is required");
        JobConfig.KafkaSource s = c.source();
        require(s.bootstrapServers() != null && !s.bootstrapServers().isBlank(), "source.bootstrapServers", "is required");
        require(s.topics() != null && !s.topics().isEmpty(), "source.topics", "needs at least one topic");
        for (int i = 0; i < s.topics().size(); i++) {
            String t = s.topics().get(i);
            require(t != null && TOPIC_NAME.matcher(t).matches(), "source.topics[" + i + "]",
                    "'" + t + "' is not a valid Kafka topic name");
        }
        require(s.maxRecordsPerBatch() >= 1, "source.maxRecordsPerBatch", "must be at least 1, was " + s.maxRecordsPerBatch());
        JobConfig.CassandraSink k = c.sink();
        require(k.contactPoints() != null && !k.contactPoints().isEmpty(), "sink.contactPoints", "needs at least one host:port");
        for (int i = 0; i < k.contactPoints().size(); i++) {
            String cp = k.contactPoints().get(i);
            require(cp != null && HOST_PORT.matcher(cp).matches(), "sink.contactPoints[" + i + "]", "'" + cp + "' is not host:port");
        }
        require(k.localDatacenter() != null && !k.localDatacenter().isBlank(), "sink.localDatacenter", "is required");
        requireIdentifier(k.keyspace(), "sink.keyspace");
        requireIdentifier(k.table(), "sink.table");
        require(k.columns() != null && !k.columns().isEmpty(), "sink.columns", "needs at least one column");
        for (Iterator<Map.Entry<String, String>> it = k.columns().entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, String> e = it.next();
            requireIdentifier(e.getKey(), "sink.columns." + e.getKey());
            require(e.getValue() != null && !e.getValue().isBlank(), "sink.columns." + e.getKey(), "needs a CEL expression");
        }
        require(k.maxInFlight() >= 1 && k.maxInFlight() <= 4096, "sink.maxInFlight", "must be 1..4096, was " + k.maxInFlight());
        require(k.maxBatchRows() >= 1 && k.maxBatchRows() <= 1000, "sink.maxBatchRows", "must be 1..1000, was " + k.maxBatchRows());
        require(k.maxBatchPartitions() >= 1 && k.maxBatchPartitions() <= k.maxBatchRows(), "sink.maxBatchPartitions",
                "must be 1..sink.maxBatchRows (" + k.maxBatchRows() + "), was " + k.maxBatchPartitions());
        require(k.maxBatchBytes() >= 1 && k.maxBatchBytes() <= 50 * 1024, "sink.maxBatchBytes",
                "must be 1..51200 (Cassandra's default batch_size_fail_threshold), was " + k.maxBatchBytes());
        require(Stream.of(Consistency.values()).anyMatch(level -> level.name().equals(k.consistency())), "sink.consistency",
                "'" + k.consistency() + "' is not a consistency level (one of " + Arrays.toString(Consistency.values()) + ")");
        if (c.deadLetter().mode() == DeadLetterMode.TABLE) {
            requireIdentifier(c.deadLetter().table(), "deadLetter.table");
        }
        require(c.deadLetter().maxValueBytes() >= 0 && c.deadLetter().maxValueBytes() <= 8 << 20, "deadLetter.maxValueBytes",
                "must be 0..8388608 (8 MiB), was " + c.deadLetter().maxValueBytes());
        require(c.trigger().intervalMs() >= 0, "trigger.intervalMs", "must not be negative");
        require(c.checkpoint().retainBatches() >= 1, "checkpoint.retainBatches", "must be at least 1");
        require(c.parallelism() >= 1, "parallelism", "must be at least 1");
        require(c.restart().maxBackoffMs() >= 1000 && c.restart().maxBackoffMs() <= 86_400_000L, "restart.maxBackoffMs",
                "must be 1000..86400000 (1 s to 1 day), was " + c.restart().maxBackoffMs());
    }

    private static void requireIdentifier(String value, String field) {
        require(value != null && CQL_IDENTIFIER.matcher(value).matches(), field,
                "'" + value + "' is not a CQL identifier (letter, then letters, digits or _, at most 48)");
    }

    private static void require(boolean ok, String field, String message) {
        if (!ok) {
            throw new InvalidConfigException(field, message);
        }
    }

    private static String path(java.util.List<com.fasterxml.jackson.databind.JsonMappingException.Reference> refs) {
        StringBuilder sb = new StringBuilder();
        for (var ref : refs) {
            if (ref.getFieldName() != null) {
                sb.append(sb.isEmpty() ? "" : ".").append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            }
        }
        return sb.isEmpty() ? "(document)" : sb.toString();
    }
}
