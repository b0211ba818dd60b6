package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A {@link BatchLog} kept as one file per batch, named by the batch id, in one directory
 * ({@code offsets/} or {@code commits/}): the checkpoint's logs as builds before
 * {@link AppendBatchLog} wrote them, kept here to make such checkpoints in tests (a build reads
 * them through {@link AppendBatchLog}). Files are written with {@link DurableFiles} and never
 * overwritten. A file that does not parse, or a stray name, is an error naming it.
 *
 * <p>The directory is listed once; after that the latest entry and the oldest batch id are
 * kept in memory and follow {@link #add} and {@link #purgeBefore}, which is right because a
 * checkpoint has a single writer (its lock file). Each batch then costs no listing and no
 * re-read of what was just written.
 */
public final class FileBatchLog<T> implements BatchLog<T> {

    private final Path dir;
    private final Class<T> type;
    private final DurableFiles files;
    private boolean scanned;
    private Entry<T> latest;
    private long oldest = -1;

    public FileBatchLog(Path dir, Class<T> type, DurableFiles files) {
        this.dir = dir;
        this.type = type;
        this.files = files;
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                files.syncDirectory(dir.getParent()); // the new log's name survives a power loss like its files
            }
            DurableFiles.removeTempFiles(dir);
            files.syncDirectory(dir); // entries a crash left linked but unsynced are durable before planning reads them
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot prepare log directory: " + Checkpoint.describe(e), e);
        }
    }

    private FileBatchLog(Path dir, Class<T> type) {
        this.dir = dir;
        this.type = type;
        this.files = null;
    }

    /**
     * The log for reading only: nothing is created, cleaned up or written (a missing directory
     * is an empty log), so it can be read while a worker uses the checkpoint, or from a copy.
     */
    public static <T> FileBatchLog<T> readOnly(Path dir, Class<T> type) {
        return new FileBatchLog<>(dir, type);
    }

    public Path directory() {
        return dir;
    }

    @Override
    public boolean add(long batchId, T entry) {
        requireWritable();
        Path file = file(batchId);
        byte[] bytes = CheckpointJson.encode(entry);
        boolean created;
        try {
            created = files.createAtomically(file, bytes);
        } catch (IOException e) {
            // The file may exist after all (written, its directory not synced): read the log afresh next time.
            scanned = false;
            latest = null;
            oldest = -1;
            throw new CheckpointUnavailableException(file, "cannot write: " + Checkpoint.describe(e, file), e);
        }
        if (created && scanned) {
            if (latest == null || batchId > latest.batchId()) {
                // What a later read of the file would give: the decoded bytes, not the object passed in.
                latest = new Entry<>(batchId, CheckpointJson.decode(file, bytes, type));
            }
            if (oldest < 0 || batchId < oldest) {
                oldest = batchId;
            }
        }
        return created;
    }

    @Override
    public Optional<T> get(long batchId) {
        Path file = file(batchId);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new CheckpointUnavailableException(file, "cannot read: " + Checkpoint.describe(e, file), e);
        }
        return Optional.of(CheckpointJson.decode(file, bytes, type));
    }

    @Override
    public Optional<Entry<T>> latest() {
        if (!scanned) {
            List<Long> ids = batchIds();
            if (!ids.isEmpty()) {
                long id = ids.get(ids.size() - 1);
                latest = get(id).map(v -> new Entry<>(id, v)).orElse(null);
                oldest = ids.get(0);
            }
            scanned = true;
        }
        return Optional.ofNullable(latest);
    }

    @Override
    public List<Long> batchIds() {
        List<Long> ids = new ArrayList<>();
        if (files == null && !Files.isDirectory(dir)) {
            return ids;
        }
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : (Iterable<Path>) list::iterator) {
                String name = f.getFileName().toString();
                if (name.contains(DurableFiles.TEMP_MARK)) {
                    continue;
                }
                if (!name.matches("\\d{1,18}")) {
                    throw new CheckpointException(f, "unexpected file in a batch log (names are batch ids)");
                }
                ids.add(Long.parseLong(name));
            }
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot list: " + Checkpoint.describe(e), e);
        }
        Collections.sort(ids);
        return ids;
    }

    /**
     * Deletes the files of batches below {@code batchId}. Deletions are not fsync'd: a file that
     * reappears after a crash is an old, committed batch below the latest, which planning ignores
     * and the next purge deletes again.
     */
    @Override
    public void purgeBefore(long batchId) {
        requireWritable();
        latest();
        if (oldest < 0 || oldest >= batchId) {
            return;
        }
        for (long id = oldest; id < batchId; id++) {
            try {
                Files.deleteIfExists(file(id));
            } catch (IOException e) {
                throw new CheckpointUnavailableException(file(id), "cannot delete: " + Checkpoint.describe(e, file(id)), e);
            }
        }
        if (latest != null && latest.batchId() < batchId) {
            latest = null;
            oldest = -1;
        } else {
            oldest = batchId;
        }
    }

    private void requireWritable() {
        if (files == null) {
            throw new UnsupportedOperationException(dir + " was opened for reading only");
        }
    }

    private Path file(long batchId) {
        if (batchId < 0) {
            throw new IllegalArgumentException("batch id must not be negative: " + batchId);
        }
        return dir.resolve(Long.toString(batchId));
    }
}
