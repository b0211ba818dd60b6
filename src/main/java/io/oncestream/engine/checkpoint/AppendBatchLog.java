package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * A {@link BatchLog} whose entries are appended to segment files, each append made durable with
 * one {@code fdatasync}: no new name and no directory {@code fsync} per entry, which on this
 * project's disks costs a fifth of a new file at the median and a twentieth at the 99th
 * percentile (docs/benchmarks.md, "What one checkpoint entry costs").
 *
 * <p>Layout, in the log's directory ({@code offsets/} or {@code commits/}):
 * <pre>
 * log-&lt;first id&gt;   a segment: frames of [length int][CRC-32C int of id and entry][id long][entry]
 * &lt;id&gt;              an entry of an older build: one file per batch, still read
 * </pre>
 * An entry's bytes are those such a file holds (the version line and the JSON).
 * A new segment is started after {@code segmentEntries} entries, its name made durable before
 * the first append; purging deletes whole segments whose every id is below the cut.
 *
 * <p>A crash can leave only the last frame of the last segment incomplete (each append is
 * durable before the next starts): a frame that runs past the end of the file, one that ends
 * exactly there but fails its checksum, or zeros up to the end. Such a tail was never
 * acknowledged, so nothing relied on it: reading ignores it ({@link #incompleteTail()} says
 * where it is), and the next {@link #add} cuts it off first. Not before: {@link Checkpoint}
 * first checks that the two logs agree without it (damage at the end of a log looks the same
 * and must stay for inspection). Anything else that does not check out is damage, an error
 * naming the segment and the byte where its bad frame starts, never skipped.
 */
public final class AppendBatchLog<T> implements BatchLog<T> {

    /** The name of a segment: this, then the id of its first entry. */
    public static final String SEGMENT = "log-";
    static final int HEADER_BYTES = 16;
    /** More than any entry can need (a write-ahead entry of 100,000 partitions is about 10 MB). */
    static final int MAX_ENTRY_BYTES = 64 * 1024 * 1024;

    /** An incomplete last frame: {@code bytes} bytes from {@code position} of the last segment {@code file}. */
    public record IncompleteTail(Path file, long position, long bytes) {

        @Override
        public String toString() {
            return file + ": an incomplete entry of " + bytes + " bytes at byte " + position;
        }
    }

    /** A frame's header: the entry's length, the CRC-32C of id and entry, the batch id. */
    private record Header(int length, int crc, long id) {

        static Header read(FileChannel channel, ByteBuffer buffer, long at) throws IOException {
            buffer.clear();
            readFully(channel, buffer, at);
            buffer.flip();
            return new Header(buffer.getInt(), buffer.getInt(), buffer.getLong());
        }

        boolean plausible() {
            return length >= 0 && length <= MAX_ENTRY_BYTES;
        }
    }

    /** Where an entry is: a frame in a segment, or a whole file of an older build ({@code length} -1). */
    private record Location(Path file, long position, int length) {
    }

    private final Path dir;
    private final Class<T> type;
    private final DurableFiles files;
    private final int segmentEntries;
    private final TreeMap<Long, Location> index = new TreeMap<>();
    /** Each segment's first id, and its file. */
    private final TreeMap<Long, Path> segments = new TreeMap<>();
    private FileChannel tail;
    private int tailEntries;
    /** Where the last segment's last whole entry ends: the size it must have when the next is appended. */
    private long tailEnd;
    /** A failed append may have left part of a frame: the log is read afresh before the next. */
    private boolean stale;
    /** The latest entry as last read or written, so that planning each batch reads no file. */
    private Entry<T> latest;
    /** What a crash left at the end of the last segment, cut off before the next append; null if none. */
    private IncompleteTail torn;
    /** The last entry {@link #addLazily added lazily}, until it is known to be durable; null when none is pending. */
    private Pending pending;

    /** An entry appended by {@link #addLazily}, whose {@code fdatasync} runs on another thread. */
    private record Pending(long batchId, FileChannel channel, Path file, long start, Future<?> sync) {
    }

    /**
     * Opens the log in {@code dir} for writing (creating the directory if needed). An incomplete
     * last frame a crash left is cut off by the next {@link #add}.
     */
    public AppendBatchLog(Path dir, Class<T> type, DurableFiles files, int segmentEntries) {
        if (segmentEntries < 1) {
            throw new IllegalArgumentException("segmentEntries must be at least 1: " + segmentEntries);
        }
        this.dir = dir;
        this.type = type;
        this.files = files;
        this.segmentEntries = segmentEntries;
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                files.syncDirectory(dir.getParent());
            }
            DurableFiles.removeTempFiles(dir);
            files.syncDirectory(dir);
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot prepare log directory: " + Checkpoint.describe(e), e);
        }
        scan();
        // An entry a crashed process appended but did not fdatasync is in the page cache: made
        // durable before recovery acts on it, or a power loss after a replay planned from it
        // could take it back (model/protocol.pml found this for the directory fsync of files).
        if (!segments.isEmpty()) {
            Path last = segments.lastEntry().getValue();
            try (FileChannel channel = FileChannel.open(last, StandardOpenOption.WRITE)) {
                files.syncFile(channel);
            } catch (IOException e) {
                throw new CheckpointUnavailableException(last, "cannot sync: " + Checkpoint.describe(e, last), e);
            }
        }
    }

    private AppendBatchLog(Path dir, Class<T> type) {
        this.dir = dir;
        this.type = type;
        this.files = null;
        this.segmentEntries = 1;
        if (Files.isDirectory(dir)) {
            scan();
        }
    }

    /**
     * The log for reading only: nothing is created, cut off or written (a missing directory is
     * an empty log), so it can be read while a worker uses the checkpoint, or from a copy.
     */
    public static <T> AppendBatchLog<T> readOnly(Path dir, Class<T> type) {
        return new AppendBatchLog<>(dir, type);
    }

    public Path directory() {
        return dir;
    }

    /** The segment appended to last, if there is one. */
    public Optional<Path> lastSegment() {
        refreshIfStale();
        return segments.isEmpty() ? Optional.empty() : Optional.of(segments.lastEntry().getValue());
    }

    @Override
    public boolean add(long batchId, T entry) {
        return add(batchId, entry, false);
    }

    /**
     * As {@link #add}, but returns once the entry is appended, before it is durable: its
     * {@code fdatasync} runs on another thread while the caller goes on. The next {@link #add}
     * or {@code addLazily}, {@link #awaitDurable} and {@link #close} wait for it first, so at
     * most the last entry of the log is ever not durable, and a crash can still only tear the
     * last frame. What the caller does meanwhile must hold whether or not the entry survives
     * a power loss (the commit log: the next write-ahead entry carries the commit, see
     * {@link Checkpoint}).
     */
    public boolean addLazily(long batchId, T entry) {
        return add(batchId, entry, true);
    }

    /**
     * Waits until the entry {@link #addLazily added lazily} is durable. A sync that failed is
     * tried again here, in the caller's thread: until it succeeds, the entry may not be durable,
     * and nothing is appended after it.
     */
    public void awaitDurable() {
        Pending p = pending;
        if (p == null) {
            return;
        }
        try {
            p.sync().get();
        } catch (ExecutionException failed) {
            try {
                files.syncAppended(p.channel(), p.file(), p.start());
            } catch (IOException e) {
                throw new CheckpointUnavailableException(p.file(), "cannot make batch " + p.batchId() + "'s entry durable: "
                        + Checkpoint.describe(e, p.file()), e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CheckpointUnavailableException(p.file(), "interrupted while batch " + p.batchId()
                    + "'s entry is made durable", null);
        }
        pending = null;
    }

    private boolean add(long batchId, T entry, boolean lazily) {
        requireWritable();
        awaitDurable();
        if (batchId < 0) {
            throw new IllegalArgumentException("batch id must not be negative: " + batchId);
        }
        refreshIfStale();
        if (index.containsKey(batchId)) {
            return false;
        }
        if (!index.isEmpty() && batchId < index.lastKey()) {
            throw new IllegalArgumentException("batch " + batchId + " is below the log's latest, " + index.lastKey()
                    + ": entries are appended in order");
        }
        byte[] bytes = CheckpointJson.encode(entry);
        if (torn != null) {
            cutTail(torn);
            torn = null;
        }
        if (!segments.isEmpty() && tailEntries == 0 && segments.lastKey() != batchId) {
            // Created, then a crash before its first entry was whole: replaced by one named after
            // this entry. Not at opening, so that a segment emptied by damage is there to inspect
            // when the checkpoint's logs do not agree.
            closeTail();
            delete(segments.remove(segments.lastKey()));
        }
        boolean newSegment = segments.isEmpty() || tailEntries >= segmentEntries;
        Path file = newSegment ? dir.resolve(SEGMENT + batchId) : segments.lastEntry().getValue();
        try {
            // Until the entry is whole, the log on disk may differ from what is kept here (a new
            // segment created but not recorded, part of a frame): a failure is read afresh.
            stale = true;
            if (newSegment) {
                closeTail();
                // The segment's name is durable before anything is appended to it.
                try (FileChannel created = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    files.syncFile(created);
                }
                files.syncDirectory(dir);
                segments.put(batchId, file);
                tailEntries = 0;
                tailEnd = 0;
            }
            if (tail == null) {
                tail = FileChannel.open(file, StandardOpenOption.WRITE);
            }
            long position = tail.size();
            if (position != tailEnd) {
                // What a create-only name did for the files of older builds: a second writer
                // (a volume whose locks do not hold) stops here, before reading anything.
                throw new CheckpointException(file, "holds " + position + " bytes but this worker's last entry in it ends at byte "
                        + tailEnd + ": another process is appending to this checkpoint (a volume whose file locks do not work?)");
            }
            tail.position(position);
            if (lazily && !files.syncsInline()) {
                files.appendUnsynced(tail, file, frame(batchId, bytes));
                FileChannel channel = tail;
                pending = new Pending(batchId, channel, file, position, DurableFiles.SYNCS.submit(() -> {
                    files.syncAppended(channel, file, position);
                    return null;
                }));
            } else {
                files.append(tail, file, frame(batchId, bytes));
            }
            stale = false;
            index.put(batchId, new Location(file, position + HEADER_BYTES, bytes.length));
            tailEntries++;
            tailEnd = position + HEADER_BYTES + bytes.length;
            // What a later read would give: the decoded bytes, not the object passed in.
            latest = new Entry<>(batchId, CheckpointJson.decode(file, bytes, type));
        } catch (IOException e) {
            throw new CheckpointUnavailableException(file, "cannot write: " + Checkpoint.describe(e, file), e);
        }
        return true;
    }

    private void closeTail() {
        if (tail != null) {
            try {
                tail.close();
            } catch (IOException ignored) {
                // nothing was pending: every append was forced or failed
            }
            tail = null;
        }
    }

    /** After a failed append, what the file holds is read afresh: the entry may be there after all. */
    private void refreshIfStale() {
        if (stale) {
            closeTail();
            scan();
            if (files != null) {
                try {
                    files.syncDirectory(dir); // a segment created by the failed call may not have its name durable yet
                } catch (IOException e) {
                    throw new CheckpointUnavailableException(dir, "cannot sync: " + Checkpoint.describe(e), e);
                }
            }
        }
    }

    @Override
    public Optional<T> get(long batchId) {
        refreshIfStale();
        Location at = index.get(batchId);
        if (at == null) {
            return Optional.empty();
        }
        byte[] bytes;
        try {
            if (at.length() < 0) {
                bytes = Files.readAllBytes(at.file());
            } else {
                bytes = new byte[at.length()];
                try (FileChannel channel = FileChannel.open(at.file(), StandardOpenOption.READ)) {
                    readFully(channel, ByteBuffer.wrap(bytes), at.position());
                }
            }
        } catch (NoSuchFileException e) {
            return Optional.empty(); // purged meanwhile
        } catch (IOException e) {
            throw new CheckpointUnavailableException(at.file(), "cannot read: " + Checkpoint.describe(e, at.file()), e);
        }
        return Optional.of(CheckpointJson.decode(at.file(), bytes, type));
    }

    @Override
    public Optional<Entry<T>> latest() {
        refreshIfStale();
        if (index.isEmpty()) {
            return Optional.empty();
        }
        long id = index.lastKey();
        if (latest == null || latest.batchId() != id) {
            latest = get(id).map(v -> new Entry<>(id, v)).orElse(null);
        }
        return Optional.ofNullable(latest);
    }

    /** The incomplete last frame a crash left (ignored by reading, cut off by the next append), if any. */
    public Optional<IncompleteTail> incompleteTail() {
        refreshIfStale();
        return Optional.ofNullable(torn);
    }

    @Override
    public List<Long> batchIds() {
        refreshIfStale();
        return new ArrayList<>(index.keySet());
    }

    /**
     * Drops the entries below {@code batchId}: the files of an older build's entries, and every
     * segment all of whose ids are below it (not the tail). Entries of a segment that is kept
     * stay in it: after a restart they are read again, below the latest, which planning ignores.
     * Deletions are not fsync'd, for the same reason.
     */
    @Override
    public void purgeBefore(long batchId) {
        requireWritable();
        refreshIfStale();
        List<Long> firsts = new ArrayList<>(segments.keySet());
        for (int i = 0; i + 1 < firsts.size(); i++) {
            if (firsts.get(i + 1) <= batchId) {
                delete(segments.remove(firsts.get(i)));
            }
        }
        for (Map.Entry<Long, Location> e : new ArrayList<>(index.headMap(batchId).entrySet())) {
            if (e.getValue().length() < 0) {
                delete(e.getValue().file());
            }
            index.remove(e.getKey());
        }
    }

    private void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new CheckpointUnavailableException(file, "cannot delete: " + Checkpoint.describe(e, file), e);
        }
    }

    /** Reads the directory: older entries' files, and every segment's frames. */
    private void scan() {
        index.clear();
        segments.clear();
        tailEntries = 0;
        tailEnd = 0;
        latest = null;
        torn = null;
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : (Iterable<Path>) list::iterator) {
                String name = f.getFileName().toString();
                if (name.contains(DurableFiles.TEMP_MARK)) {
                    continue;
                }
                if (name.matches("\\d{1,18}")) {
                    index.put(Long.parseLong(name), new Location(f, -1, -1));
                } else if (name.startsWith(SEGMENT) && name.substring(SEGMENT.length()).matches("\\d{1,18}")) {
                    segments.put(Long.parseLong(name.substring(SEGMENT.length())), f);
                } else {
                    throw new CheckpointException(f, "unexpected file in a batch log (names are batch ids or " + SEGMENT
                            + "<first batch id>)");
                }
            }
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot list: " + Checkpoint.describe(e), e);
        }
        Long last = segments.isEmpty() ? null : segments.lastKey();
        for (Map.Entry<Long, Path> segment : new ArrayList<>(segments.entrySet())) {
            boolean isLast = segment.getKey().equals(last);
            int entries = read(segment.getValue(), segment.getKey(), isLast);
            if (entries == 0 && !isLast) {
                throw new CheckpointException(segment.getValue(), "an empty segment before the last one");
            }
            if (isLast) {
                tailEntries = entries;
            }
        }
        stale = false;
    }

    /** Indexes the frames of {@code file}; returns how many. A bad last frame of the last segment is a crash's tail. */
    private int read(Path file, long firstId, boolean last) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            long position = 0;
            int count = 0;
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
            while (position < size) {
                String bad;
                long frameEnd;
                if (size - position < HEADER_BYTES) {
                    bad = "an incomplete frame header";
                } else {
                    Header h = Header.read(channel, header, position);
                    int length = h.length();
                    long id = h.id();
                    frameEnd = position + HEADER_BYTES + (long) length;
                    if (!h.plausible()) {
                        bad = "an entry length of " + length + " bytes";
                    } else if (frameEnd > size) {
                        bad = "a frame of " + length + " bytes running past the end of the file";
                    } else {
                        byte[] entry = new byte[length];
                        readFully(channel, ByteBuffer.wrap(entry), position + HEADER_BYTES);
                        if (checksum(id, entry) != h.crc()) {
                            bad = "a checksum that does not match";
                        } else if (count == 0 && id != firstId) {
                            throw new CheckpointException(file, "its first entry is batch " + id + ", its name says " + firstId);
                        } else if (!index.isEmpty() && id <= index.lastKey()) {
                            throw new CheckpointException(file, "batch " + id + " at byte " + position + " is not after batch "
                                    + index.lastKey() + " before it");
                        } else {
                            index.put(id, new Location(file, position + HEADER_BYTES, length));
                            count++;
                            position = frameEnd;
                            continue;
                        }
                    }
                }
                if (last && !validFrameAfter(channel, position, size)) {
                    torn = new IncompleteTail(file, position, size - position);
                    tailEnd = position;
                    return count;
                }
                throw new CheckpointException(file, "damaged at byte " + position + " (" + bad + "), with " + (size - position)
                        + " bytes after it: not the incomplete last entry a crash leaves");
            }
            if (last) {
                tailEnd = size;
            }
            return count;
        } catch (IOException e) {
            throw new CheckpointUnavailableException(file, "cannot read: " + Checkpoint.describe(e, file), e);
        }
    }

    /** Cuts off the incomplete frame a crash left, before the next append. */
    private void cutTail(IncompleteTail tail) {
        closeTail();
        try (FileChannel channel = FileChannel.open(tail.file(), StandardOpenOption.WRITE)) {
            channel.truncate(tail.position());
            files.syncFile(channel);
        } catch (IOException e) {
            throw new CheckpointUnavailableException(tail.file(), "cannot cut off an incomplete entry: "
                    + Checkpoint.describe(e, tail.file()), e);
        }
        java.util.logging.Logger.getLogger(AppendBatchLog.class.getName()).info(tail + " cut off: a crash left it while"
                + " appending, so it was never made durable and nothing went on from it");
    }

    /**
     * Whether a frame that checks out starts anywhere after {@code position}: then the bad frame
     * there is not a crash's incomplete last one (a crash tears only the frame being appended)
     * but damage, and what follows it must not be cut off.
     */
    private static boolean validFrameAfter(FileChannel channel, long position, long size) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
        for (long at = position + 1; at + HEADER_BYTES <= size; at++) {
            Header h = Header.read(channel, header, at);
            if (h.plausible() && at + HEADER_BYTES + h.length() <= size) {
                byte[] entry = new byte[h.length()];
                readFully(channel, ByteBuffer.wrap(entry), at + HEADER_BYTES);
                if (checksum(h.id(), entry) == h.crc()) {
                    return true;
                }
            }
        }
        return false;
    }

    static ByteBuffer frame(long batchId, byte[] entry) {
        ByteBuffer frame = ByteBuffer.allocate(HEADER_BYTES + entry.length);
        frame.putInt(entry.length).putInt(checksum(batchId, entry)).putLong(batchId).put(entry).flip();
        return frame;
    }

    private static int checksum(long batchId, byte[] entry) {
        CRC32C crc = new CRC32C();
        crc.update(ByteBuffer.allocate(Long.BYTES).putLong(0, batchId));
        crc.update(entry);
        return (int) crc.getValue();
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, at);
            if (n < 0) {
                throw new java.io.EOFException("end of file at byte " + at);
            }
            at += n;
        }
    }

    private void requireWritable() {
        if (files == null) {
            throw new UnsupportedOperationException(dir + " was opened for reading only");
        }
    }

    /**
     * Closes the segment being appended to, once an entry {@link #addLazily added lazily} is
     * durable. If its sync fails again, that is logged: the next opening of the log syncs its
     * last segment before anything reads it.
     */
    public void close() {
        try {
            if (files != null) {
                awaitDurable();
            }
        } catch (CheckpointUnavailableException e) {
            java.util.logging.Logger.getLogger(AppendBatchLog.class.getName()).warning(e.getMessage()
                    + "; the next worker to open the checkpoint syncs it first");
            pending = null;
        }
        closeTail();
    }
}
