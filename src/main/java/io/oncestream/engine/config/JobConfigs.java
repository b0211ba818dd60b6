package io.oncestream.engine.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Reads, defaults and checks a worker's {@link JobConfig}. Defaults are applied on the JSON
 * tree so that the record the engine sees is complete; every error names its field.
 */
public final class JobConfigs {

    private static final Pattern CQL_IDENTIFIER = Pattern.compile("[a-zA-Z][a-zA-Z0-9_]{0,47}");

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
        source.putIfAbsent("startingOffsets", source.textNode("earliest"));
        source.putIfAbsent("maxRecordsPerBatch", source.numberNode(50_000));
        source.putIfAbsent("failOnDataLoss", source.booleanNode(true));
        source.putIfAbsent("properties", source.objectNode());
        if (!source.hasNonNull("groupId") && root.hasNonNull("jobId")) {
            source.put("groupId", "oncestream-" + root.get("jobId").asText().replace('/', '.'));
        }
        root.putIfAbsent("format", root.textNode("json"));
        ObjectNode sink = object(root, "sink");
        sink.putIfAbsent("consistency", sink.textNode("LOCAL_QUORUM"));
        sink.putIfAbsent("maxInFlight", sink.numberNode(256));
        sink.putIfAbsent("maxBatchRows", sink.numberNode(32));
        ObjectNode deadLetter = object(root, "deadLetter");
        deadLetter.putIfAbsent("mode", deadLetter.textNode("fail"));
        ObjectNode trigger = object(root, "trigger");
        trigger.putIfAbsent("intervalMs", trigger.numberNode(1000));
        trigger.putIfAbsent("availableNow", trigger.booleanNode(false));
        ObjectNode checkpoint = object(root, "checkpoint");
        checkpoint.putIfAbsent("retainBatches", checkpoint.numberNode(100));
        root.putIfAbsent("parallelism", root.numberNode(1));
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
            require(t != null && t.matches("[a-zA-Z0-9._-]{1,249}"), "source.topics[" + i + "]",
                    "'" + t + "' is not a valid Kafka topic name");
        }
        require(s.maxRecordsPerBatch() >= 1, "source.maxRecordsPerBatch", "must be at least 1, was " + s.maxRecordsPerBatch());
        JobConfig.CassandraSink k = c.sink();
        require(k.contactPoints() != null && !k.contactPoints().isEmpty(), "sink.contactPoints", "needs at least one host:port");
        for (int i = 0; i < k.contactPoints().size(); i++) {
            String cp = k.contactPoints().get(i);
            require(cp != null && cp.matches("[^:\\s]+:\\d{1,5}"), "sink.contactPoints[" + i + "]", "'" + cp + "' is not host:port");
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
        try {
            com.datastax.oss.driver.api.core.DefaultConsistencyLevel.valueOf(k.consistency());
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigException("sink.consistency", "'" + k.consistency() + "' is not a consistency level");
        }
        if (c.deadLetter().mode() == JobConfig.DeadLetterMode.TABLE) {
            requireIdentifier(c.deadLetter().table(), "deadLetter.table");
        }
        require(c.trigger().intervalMs() >= 0, "trigger.intervalMs", "must not be negative");
        require(c.checkpoint().retainBatches() >= 1, "checkpoint.retainBatches", "must be at least 1");
        require(c.parallelism() >= 1, "parallelism", "must be at least 1");
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
