package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Create-only, crash-safe file writes: write a temp file, fsync it, link it to its final
 * name (which fails if that name exists, so nothing is ever overwritten), remove the temp
 * name, fsync the directory. After {@link #createAtomically} returns true, the file is
 * complete and survives a power loss; a crash before leaves at most a temp file, which
 * {@link #removeTempFiles} deletes on the next start.
 */
public final class DurableFiles {

    static final String TEMP_MARK = ".tmp-";

    private final boolean fsync;

    private DurableFiles(boolean fsync) {
        this.fsync = fsync;
    }

    /** The real thing. */
    public static DurableFiles synced() {
        return new DurableFiles(true);
    }

    /** Without fsync: only for the benchmark that measures what fsync costs. */
    public static DurableFiles unsyncedForBenchmark() {
        return new DurableFiles(false);
    }

    /** Writes {@code content} to {@code target} unless it exists; returns false if it existed. */
    public boolean createAtomically(Path target, byte[] content) throws IOException {
        Path dir = target.getParent();
        Path temp = dir.resolve("." + target.getFileName() + TEMP_MARK + UUID.randomUUID());
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            if (fsync) {
                channel.force(true);
            }
        }
        try {
            Files.createLink(target, temp);
        } catch (FileAlreadyExistsException e) {
            return false;
        } finally {
            Files.deleteIfExists(temp);
        }
        syncDirectory(dir);
        return true;
    }

    /** Makes creations and deletions in {@code dir} durable. */
    public void syncDirectory(Path dir) throws IOException {
        if (fsync) {
            try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
                channel.force(true);
            }
        }
    }

    /** Deletes temp files a crash left in {@code dir}. */
    public static void removeTempFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().contains(TEMP_MARK)) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }
}
