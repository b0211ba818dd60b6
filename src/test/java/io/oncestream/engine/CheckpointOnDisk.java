package io.oncestream.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import io.oncestream.engine.checkpoint.AppendBatchLog;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;

/**
 * Reads a checkpoint directory as it is on disk, without opening it (no lock, no clean-up of
 * temp files), so tests can look at what a crash left and at what a running engine wrote.
 */
final class CheckpointOnDisk {

    private final Path dir;

    CheckpointOnDisk(Path dir) {
        this.dir = dir;
    }

    /** Batch ids of {@code log} ({@code offsets} or {@code commits}), ascending; temp files are not batches. */
    List<Long> batchIds(String log) {
        return log.equals("offsets") ? AppendBatchLog.readOnly(dir.resolve(log), BatchOffsets.class).batchIds()
                : AppendBatchLog.readOnly(dir.resolve(log), BatchCommit.class).batchIds();
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
        return AppendBatchLog.readOnly(dir.resolve("offsets"), BatchOffsets.class).get(batchId)
                .orElseThrow(() -> new AssertionError("no offsets/" + batchId + " in " + dir));
    }

    BatchCommit commit(long batchId) {
        return AppendBatchLog.readOnly(dir.resolve("commits"), BatchCommit.class).get(batchId)
                .orElseThrow(() -> new AssertionError("no commits/" + batchId + " in " + dir));
    }

    String text(String relative) {
        try {
            return Files.readString(dir.resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

}
