package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.io.UncheckedIOException;
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
 * ({@code offsets/} or {@code commits/}). Files are written with {@link DurableFiles} and
 * never overwritten. A file that does not parse, or a stray name, is an error naming it.
 */
public final class FileBatchLog<T> implements BatchLog<T> {

    private final Path dir;
    private final Class<T> type;
    private final DurableFiles files;

    public FileBatchLog(Path dir, Class<T> type, DurableFiles files) {
        this.dir = dir;
        this.type = type;
        this.files = files;
        try {
            Files.createDirectories(dir);
            DurableFiles.removeTempFiles(dir);
        } catch (IOException e) {
            throw new CheckpointException(dir, "cannot prepare log directory: " + e.getMessage(), e);
        }
    }

    public Path directory() {
        return dir;
    }

    @Override
    public boolean add(long batchId, T entry) {
        Path file = file(batchId);
        try {
            return files.createAtomically(file, CheckpointJson.encode(entry));
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot write: " + e.getMessage(), e);
        }
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
            throw new CheckpointException(file, "cannot read: " + e.getMessage(), e);
        }
        return Optional.of(CheckpointJson.decode(file, bytes, type));
    }

    @Override
    public Optional<Entry<T>> latest() {
        List<Long> ids = batchIds();
        if (ids.isEmpty()) {
            return Optional.empty();
        }
        long id = ids.get(ids.size() - 1);
        return get(id).map(v -> new Entry<>(id, v));
    }

    @Override
    public List<Long> batchIds() {
        List<Long> ids = new ArrayList<>();
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
            throw new CheckpointException(dir, "cannot list: " + e.getMessage(), e);
        }
        Collections.sort(ids);
        return ids;
    }

    @Override
    public void purgeBefore(long batchId) {
        boolean deleted = false;
        for (long id : batchIds()) {
            if (id >= batchId) {
                break;
            }
            try {
                deleted |= Files.deleteIfExists(file(id));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete " + file(id), e);
            }
        }
        if (deleted) {
            try {
                files.syncDirectory(dir);
            } catch (IOException e) {
                throw new CheckpointException(dir, "cannot sync after purge: " + e.getMessage(), e);
            }
        }
    }

    private Path file(long batchId) {
        if (batchId < 0) {
            throw new IllegalArgumentException("batch id must not be negative: " + batchId);
        }
        return dir.resolve(Long.toString(batchId));
    }
}
