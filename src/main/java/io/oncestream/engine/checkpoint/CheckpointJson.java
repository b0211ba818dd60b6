package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import io.oncestream.contract.CheckpointSeal;

/**
 * The format of every checkpoint file: a version line ({@code v1}) and one JSON document.
 * A reader refuses any other version, so a newer writer's files are never misread.
 */
final class CheckpointJson {

    static final String VERSION_LINE = "v1";

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    /**
     * Fields added to a {@code v1} document after files without them were written: a file that
     * lacks one reads as if it were null. Every other field must be present.
     */
    private static final java.util.Map<Class<?>, java.util.List<String>> ADDED_FIELDS = java.util.Map.of(
            BatchCommit.class, java.util.List.of("totals"),
            BatchOffsets.class, java.util.List.of("committedBefore"),
            CheckpointSeal.class, java.util.List.of("totals"),
            Savepoint.class, java.util.List.of("totals"));

    /** Fields that hold a document of another type, whose own added fields are filled in the same way. */
    private static final java.util.Map<Class<?>, java.util.Map<String, Class<?>>> NESTED = java.util.Map.of(
            BatchOffsets.class, java.util.Map.of("committedBefore", BatchCommit.class));

    private CheckpointJson() {
    }

    static byte[] encode(Object value) {
        try {
            return (VERSION_LINE + "\n" + MAPPER.writeValueAsString(value) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode " + value, e);
        }
    }

    static <T> T decode(Path file, byte[] bytes, Class<T> type) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        int newline = text.indexOf('\n');
        if (newline < 0) {
            throw new CheckpointException(file, bytes.length == 0 ? "file is empty" : "no version line");
        }
        String version = text.substring(0, newline).strip();
        if (!VERSION_LINE.equals(version)) {
            throw new CheckpointException(file, "unsupported version line '" + abbreviate(version)
                    + "' (this worker reads " + VERSION_LINE + ")");
        }
        try {
            com.fasterxml.jackson.databind.JsonNode tree = MAPPER.readTree(text.substring(newline + 1));
            fillAddedFields(tree, type);
            T value = tree == null || tree.isMissingNode() || tree.isNull() ? null : MAPPER.treeToValue(tree, type);
            if (value == null) {
                throw new CheckpointException(file, "no JSON document after the version line");
            }
            return value;
        } catch (IOException e) {
            throw new CheckpointException(file, "not a valid " + type.getSimpleName() + ": "
                    + e.getMessage().lines().findFirst().orElse(""), e);
        }
    }

    /** Puts a null for each of {@link #ADDED_FIELDS} that {@code tree}, a {@code type}, lacks, also in the documents it holds. */
    private static void fillAddedFields(com.fasterxml.jackson.databind.JsonNode tree, Class<?> type) {
        if (tree instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
            ADDED_FIELDS.getOrDefault(type, java.util.List.of()).forEach(f -> {
                if (!object.has(f)) {
                    object.putNull(f);
                }
            });
            NESTED.getOrDefault(type, java.util.Map.of()).forEach((f, nested) -> fillAddedFields(object.get(f), nested));
        }
    }

    /** At most 20 characters of a damaged line, control characters shown as {@code \\uXXXX}. */
    static String abbreviate(String s) {
        String head = s.length() <= 20 ? s : s.substring(0, 20);
        StringBuilder out = new StringBuilder();
        head.codePoints().forEach(c -> out.append(Character.isISOControl(c) ? String.format("\\u%04x", c) : Character.toString(c)));
        return s.length() <= 20 ? out.toString() : out + "...";
    }
}
