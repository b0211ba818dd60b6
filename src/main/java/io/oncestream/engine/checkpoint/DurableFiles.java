package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

/**
 * Create-only, crash-safe file writes: write a temp file, fsync it, link it to its final
 * name (which fails if that name exists, so nothing is ever overwritten), remove the temp
 * name, fsync the directory. After {@link #createAtomically} returns true, the file is
 * complete and survives a power loss; a crash before leaves at most a temp file, which
 * {@link #removeTempFiles} deletes on the next start, and possibly the complete final file.
 */
public final class DurableFiles {

    static final String TEMP_MARK = ".tmp-";

    /**
     * The points inside {@link #createAtomically}, in order, at which a crash leaves a
     * different state on disk; {@link #failingAt} lets tests crash there.
     */
    public enum WritePoint {
        /** The temp file holds the first half of the content. */
        TEMP_HALF_WRITTEN,
        /** The temp file holds all the content, not yet fsync'd. */
        TEMP_WRITTEN,
        /** The temp file is fsync'd (by {@link #synced()}); the final name does not exist yet. */
        TEMP_SYNCED,
        /** The final name is linked to the temp file; the temp name still exists. */
        LINKED,
        /** The temp name is removed; the directory is not yet fsync'd. */
        TEMP_REMOVED,
        /** The directory is fsync'd (by {@link #synced()}): the file is durable; the call has not returned yet. */
        DIRECTORY_SYNCED
    }

    /** The points inside {@link #append}, in order, at which a crash leaves a different state on disk. */
    public enum AppendPoint {
        /** The file holds the first half of the appended bytes. */
        HALF_WRITTEN,
        /** The file holds all the appended bytes, not yet fdatasync'd. */
        WRITTEN,
        /** The appended bytes are fdatasync'd (by {@link #synced()}); the call has not returned yet. */
        SYNCED
    }

    /**
     * Told of each {@link AppendPoint} reached while appending to {@code file} from byte
     * {@code start} (its size before the append); may throw to simulate a crash there.
     */
    @FunctionalInterface
    public interface AppendProbe {
        void reached(AppendPoint point, Path file, long start) throws IOException;
    }

    /** Told of each {@link WritePoint} reached while creating {@code target}; may throw to simulate a crash there. */
    @FunctionalInterface
    public interface WriteProbe {
        void reached(WritePoint point, Path target) throws IOException;
    }

    private final boolean fsync;
    private final WriteProbe probe;
    private final AppendProbe appendProbe;

    private DurableFiles(boolean fsync, WriteProbe probe) {
        this(fsync, probe, null);
    }

    private DurableFiles(boolean fsync, WriteProbe probe, AppendProbe appendProbe) {
        this.fsync = fsync;
        this.probe = probe;
        this.appendProbe = appendProbe;
    }

    /** The real thing. */
    public static DurableFiles synced() {
        return new DurableFiles(true, null);
    }

    /** Without fsync: only for the benchmark that measures what fsync costs. */
    public static DurableFiles unsyncedForBenchmark() {
        return new DurableFiles(false, null);
    }

    /**
     * For in-process crash tests only: the steps of {@link #synced()}, calling {@code probe} at
     * every {@link WritePoint} of every {@link #createAtomically}. An unchecked exception the
     * probe throws ends the call and leaves the files exactly as a process crash at that point
     * would (a temp file with half or all of the content, a final name whose temp name still
     * exists, ...). Nothing is fsync'd: a process crash keeps the page cache, so in-process no
     * test can tell an fsync happened; what a power loss could undo on top (the entries of a
     * directory not yet fsync'd) is for the probe to simulate before it throws.
     */
    public static DurableFiles failingAt(WriteProbe probe) {
        if (probe == null) {
            throw new IllegalArgumentException("probe must not be null");
        }
        return new DurableFiles(false, probe);
    }

    /**
     * For in-process crash tests only, as {@link #failingAt}, for {@link #append}: {@code probe}
     * is told of every {@link AppendPoint}, and an unchecked exception it throws leaves the file
     * as a process crash there would. Nothing is fsync'd.
     */
    public static DurableFiles failingAppendAt(AppendProbe probe) {
        if (probe == null) {
            throw new IllegalArgumentException("probe must not be null");
        }
        return new DurableFiles(false, null, probe);
    }

    /** Writes {@code content} to {@code target} unless it exists; returns false if it existed. */
    public boolean createAtomically(Path target, byte[] content) throws IOException {
        Path dir = target.getParent();
        Path temp = dir.resolve("." + target.getFileName() + TEMP_MARK + UUID.randomUUID());
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            if (probe != null) {
                buffer.limit(content.length / 2);
                writeFully(channel, buffer);
                probe.reached(WritePoint.TEMP_HALF_WRITTEN, target);
                buffer.limit(content.length);
            }
            writeFully(channel, buffer);
            reached(WritePoint.TEMP_WRITTEN, target);
            if (fsync) {
                channel.force(true);
            }
            reached(WritePoint.TEMP_SYNCED, target);
        } catch (IOException e) {
            // A full volume must not fill up further with the halves of files that were never linked.
            throw removingTemp(temp, naming(target, e));
        }
        try {
            Files.createLink(target, temp);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            if (e instanceof FileAlreadyExistsException) {
                return false;
            }
            throw e;
        }
        try {
            reached(WritePoint.LINKED, target);
            Files.deleteIfExists(temp);
            reached(WritePoint.TEMP_REMOVED, target);
            syncDirectory(dir);
            reached(WritePoint.DIRECTORY_SYNCED, target);
        } catch (IOException e) {
            throw removingTemp(temp, naming(target, e));
        }
        return true;
    }

    /**
     * Appends {@code bytes} at {@code channel}'s end and makes them durable with {@code fdatasync}
     * (no directory change: the file's name was made durable when it was created). A crash
     * before this returns leaves the file as it was, or with some or all of the bytes at its
     * end: a reader must recognise an incomplete last record ({@link AppendBatchLog} does).
     */
    public void append(FileChannel channel, Path file, ByteBuffer bytes) throws IOException {
        long start = channel.position();
        appendUnsynced(channel, file, bytes);
        syncAppended(channel, file, start);
    }

    /**
     * The first half of {@link #append}: the bytes written at {@code channel}'s end, not yet
     * durable ({@link AppendPoint#HALF_WRITTEN}, {@link AppendPoint#WRITTEN}).
     */
    public void appendUnsynced(FileChannel channel, Path file, ByteBuffer bytes) throws IOException {
        long start = appendProbe == null ? -1 : channel.position();
        try {
            if (appendProbe != null) {
                int end = bytes.limit();
                bytes.limit(bytes.position() + bytes.remaining() / 2);
                writeFully(channel, bytes);
                appendProbe.reached(AppendPoint.HALF_WRITTEN, file, start);
                bytes.limit(end);
            }
            writeFully(channel, bytes);
            if (appendProbe != null) {
                appendProbe.reached(AppendPoint.WRITTEN, file, start);
            }
        } catch (IOException e) {
            throw naming(file, e);
        }
    }

    /**
     * The second half of {@link #append}: what was appended from byte {@code start} made durable
     * with {@code fdatasync} ({@link AppendPoint#SYNCED}). Safe to call from another thread than
     * the one that appended, once the append returned.
     */
    public void syncAppended(FileChannel channel, Path file, long start) throws IOException {
        try {
            if (fsync) {
                channel.force(false);
            }
            if (appendProbe != null) {
                appendProbe.reached(AppendPoint.SYNCED, file, start);
            }
        } catch (IOException e) {
            throw naming(file, e);
        }
    }

    /**
     * Whether {@link AppendBatchLog#addLazily} syncs in the calling thread: in the crash tests,
     * whose probes must stop the thread that runs the protocol where a crash would. The real
     * thing syncs on a thread of its own ({@link #SYNCS}).
     */
    boolean syncsInline() {
        return probe != null || appendProbe != null;
    }

    /** The thread that makes lazily appended entries durable, one for the process (a worker has one checkpoint). */
    static final ExecutorService SYNCS = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "checkpoint-sync");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * {@code failure} as an error of {@code target}: a failed write or fsync says only "No space
     * left on device" or "Input/output error", without the file, which a user needs to find the volume.
     */
    private static IOException naming(Path target, IOException failure) {
        if (failure instanceof java.nio.file.FileSystemException) {
            return failure;
        }
        java.nio.file.FileSystemException named = new java.nio.file.FileSystemException(target.toString(), null,
                failure.getMessage());
        named.initCause(failure);
        return named;
    }

    /** {@code failure}, after removing the temp file of a write it ended (what that fails of it is added to it). */
    private static IOException removingTemp(Path temp, IOException failure) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException suppressed) {
            failure.addSuppressed(suppressed);
        }
        return failure;
    }

    private static void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private void reached(WritePoint point, Path target) throws IOException {
        if (probe != null) {
            probe.reached(point, target);
        }
    }

    /** Makes what was written to {@code channel}'s file durable, its size and times included. */
    public void syncFile(FileChannel channel) throws IOException {
        if (fsync) {
            channel.force(true);
        }
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
