package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Everything a checkpoint directory holds, read without its lock and without creating,
 * removing or writing anything: what {@code checkpoint inspect} shows, from a running worker's
 * volume or from a copy. Every file is decoded; one that does not is an error naming it.
 *
 * @param tempFiles temp files a crash left (a worker removes them when it starts)
 * @param incompleteEntries the incomplete last entries of the logs a crash left (read as absent;
 *        a worker cuts one off at its next append to that log)
 */
public record CheckpointContents(Path directory, CheckpointMetadata metadata, SortedMap<Long, BatchOffsets> offsets,
        SortedMap<Long, BatchCommit> commits, List<Path> tempFiles, List<AppendBatchLog.IncompleteTail> incompleteEntries) {

    public static CheckpointContents read(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new CheckpointException(dir, "no such directory");
        }
        Path metadataFile = dir.resolve("metadata");
        byte[] metadata;
        try {
            metadata = Files.readAllBytes(metadataFile);
        } catch (NoSuchFileException e) {
            throw new CheckpointException(metadataFile, "missing: not a checkpoint directory, or one whose worker never started");
        } catch (IOException e) {
            throw new CheckpointException(metadataFile, "cannot read: " + e.getMessage(), e);
        }
        List<Path> temp = new ArrayList<>();
        for (Path d : List.of(dir, dir.resolve("offsets"), dir.resolve("commits"))) {
            temp.addAll(tempFiles(d));
        }
        AppendBatchLog<BatchOffsets> offsets = AppendBatchLog.readOnly(dir.resolve("offsets"), BatchOffsets.class);
        AppendBatchLog<BatchCommit> commits = AppendBatchLog.readOnly(dir.resolve("commits"), BatchCommit.class);
        List<AppendBatchLog.IncompleteTail> incomplete = new ArrayList<>();
        offsets.incompleteTail().ifPresent(incomplete::add);
        commits.incompleteTail().ifPresent(incomplete::add);
        return new CheckpointContents(dir, CheckpointJson.decode(metadataFile, metadata, CheckpointMetadata.class),
                entries(offsets), entries(commits), List.copyOf(temp), List.copyOf(incomplete));
    }

    /** The newest entry of the offset log, as planning reads it. */
    public Optional<BatchLog.Entry<BatchOffsets>> latestOffsets() {
        return offsets.isEmpty() ? Optional.empty()
                : Optional.of(new BatchLog.Entry<>(offsets.lastKey(), offsets.get(offsets.lastKey())));
    }

    /**
     * The newest entry of the commit log, as planning reads it once a worker opened the
     * checkpoint: a commit that the newest write-ahead entry carries because a power loss took
     * it back from the commit log is restored then, and is the newest ({@link #restoredCommit}).
     */
    public Optional<BatchLog.Entry<BatchCommit>> latestCommit() {
        Optional<BatchLog.Entry<BatchCommit>> logged = commits.isEmpty() ? Optional.empty()
                : Optional.of(new BatchLog.Entry<>(commits.lastKey(), commits.get(commits.lastKey())));
        return restoredCommit().or(() -> logged);
    }

    /** The commit that the newest write-ahead entry carries and the commit log lost (restored when a worker opens it), if any. */
    public Optional<BatchLog.Entry<BatchCommit>> restoredCommit() {
        Optional<BatchLog.Entry<BatchCommit>> logged = commits.isEmpty() ? Optional.empty()
                : Optional.of(new BatchLog.Entry<>(commits.lastKey(), commits.get(commits.lastKey())));
        return Checkpoint.lostCommit(latestOffsets(), logged);
    }

    private static <T> SortedMap<Long, T> entries(BatchLog<T> log) {
        SortedMap<Long, T> out = new TreeMap<>();
        for (long id : log.batchIds()) {
            log.get(id).ifPresent(entry -> out.put(id, entry));
        }
        return Collections.unmodifiableSortedMap(out);
    }

    private static List<Path> tempFiles(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().contains(DurableFiles.TEMP_MARK)).sorted().toList();
        } catch (IOException e) {
            throw new CheckpointException(dir, "cannot list: " + e.getMessage(), e);
        }
    }
}
