package io.oncestream.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;

/**
 * Reads a checkpoint directory as it is on disk, without opening it (no lock, no clean-up of
 * temp files), so tests can look at what a crash left and at what a running engine wrote.
 */
final class CheckpointOnDisk {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;

    CheckpointOnDisk(Path dir) {
        this.dir = dir;
    }

    /** Batch ids of {@code log} ({@code offsets} or {@code commits}), ascending; temp files are not batches. */
    List<Long> batchIds(String log) {
        Path logDir = dir.resolve(log);
        if (!Files.isDirectory(logDir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(logDir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.matches("\\d+")).map(Long::parseLong).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Optional<Long> latest(String log) {
        List<Long> ids = batchIds(log);
        return ids.isEmpty() ? Optional.empty() : Optional.of(ids.get(ids.size() - 1));
    }

    boolean exists(String relative) {
        return Files.exists(dir.resolve(relative));
    }

    /** Names of temp files (a crashed write's) anywhere in the checkpoint. */
    List<String> tempFiles() {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> f.getFileName().toString().contains(".tmp-")).map(f -> dir.relativize(f).toString()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    BatchOffsets offsets(long batchId) {
        return read("offsets/" + batchId, BatchOffsets.class);
    }

    BatchCommit commit(long batchId) {
        return read("commits/" + batchId, BatchCommit.class);
    }

    String text(String relative) {
        try {
            return Files.readString(dir.resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private <T> T read(String relative, Class<T> type) {
        String text = text(relative);
        if (!text.startsWith("v1\n")) {
            throw new AssertionError(relative + " does not start with the version line: " + text);
        }
        try {
            return JSON.readValue(text.substring(3).getBytes(StandardCharsets.UTF_8), type);
        } catch (IOException e) {
            throw new AssertionError(relative + " is not a " + type.getSimpleName() + ": " + text, e);
        }
    }
}
