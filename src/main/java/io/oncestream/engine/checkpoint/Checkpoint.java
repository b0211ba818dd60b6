package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.oncestream.contract.CheckpointSeal;

/**
 * A worker's checkpoint directory:
 * <pre>
 * metadata      job id and partition share ({@link CheckpointMetadata})
 * offsets/      the write-ahead log: batch N's exact ranges, written before reading ({@link AppendBatchLog})
 * commits/      the commit log: written after every row of batch N is acknowledged
 * .lock         held exclusively while a worker uses the directory; says who holds it
 * savepoint     epochs after the first: the savepoint this checkpoint was seeded from ({@link Savepoint})
 * sealed        the epoch ended at a barrier: nothing is planned here again ({@link CheckpointSeal})
 * recovered     a lost volume's: the chain points it took from the consumer group ({@link RecoveredChain})
 * </pre>
 * Epoch 0 is the volume's root, epoch e the directory {@code epoch-<e>} ({@link CheckpointEpochs}).
 */
public final class Checkpoint implements AutoCloseable {

    /** Checkpoint directories (real paths) this JVM holds open. */
    private static final Set<Path> HELD_IN_THIS_PROCESS = ConcurrentHashMap.newKeySet();

    /** Entries per segment of each log: a new file (and a directory fsync) once in so many batches. */
    public static final int SEGMENT_ENTRIES = 1024;

    static final String SEALED = "sealed";
    static final String SAVEPOINT = "savepoint";
    static final String RECOVERED = "recovered";

    private final Path dir;
    private final DurableFiles files;
    private final Path held;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final AppendBatchLog<BatchOffsets> offsets;
    private final AppendBatchLog<BatchCommit> commits;
    private boolean closed;

    private Checkpoint(Path dir, Path held, FileChannel lockChannel, FileLock lock, DurableFiles files, int segmentEntries) {
        this.dir = dir;
        this.files = files;
        this.held = held;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.offsets = new AppendBatchLog<>(dir.resolve("offsets"), BatchOffsets.class, files, segmentEntries);
        this.commits = new AppendBatchLog<>(dir.resolve("commits"), BatchCommit.class, files, segmentEntries);
        Optional<BatchLog.Entry<BatchCommit>> lost = lostCommit(offsets.latest(), commits.latest());
        if (lost.isPresent()) {
            commits.add(lost.get().batchId(), lost.get().value());
            java.util.logging.Logger.getLogger(Checkpoint.class.getName()).info("commit of batch " + lost.get().batchId()
                    + " restored from the write-ahead entry of batch " + (lost.get().batchId() + 1) + " (" + offsets.directory()
                    + "): it was not durable yet when the worker stopped");
        }
        checkLogsAgree(offsets, commits);
    }

    /**
     * The commit of batch N-1 that the write-ahead entry of batch N carries, when the commit log
     * ends at N-2 (or holds nothing, for N = 1): a commit is made durable while the next batch
     * runs, so a power loss can take it back once that batch's write-ahead entry is durable,
     * which is appended only after every row of N-1 was acknowledged. Empty otherwise, also
     * for such logs whose entry does not carry it (an older build's: damage).
     */
    static Optional<BatchLog.Entry<BatchCommit>> lostCommit(Optional<BatchLog.Entry<BatchOffsets>> lastOffsets,
            Optional<BatchLog.Entry<BatchCommit>> lastCommit) {
        if (lastOffsets.isEmpty()) {
            return Optional.empty();
        }
        long n = lastOffsets.get().batchId();
        long c = lastCommit.map(BatchLog.Entry::batchId).orElse(-1L);
        if (n < 1 || c != n - 2) {
            return Optional.empty();
        }
        return lastOffsets.get().value().restoredCommitBefore().map(commit -> new BatchLog.Entry<>(n - 1, commit));
    }

    /**
     * The two logs as the protocol leaves them, whatever crashed: batch N is planned only once
     * N-1 is committed, and committed only after its write-ahead entry, so the offset log ends
     * at the last commit or one batch after it. Anything else is damage: an error naming the log
     * that lost entries (its incomplete last entry, if any, which is then not cut off), before
     * anything is appended.
     */
    static void checkLogsAgree(AppendBatchLog<BatchOffsets> offsets, AppendBatchLog<BatchCommit> commits) {
        long n = offsets.latest().map(BatchLog.Entry::batchId).orElse(-1L);
        long c = commits.latest().map(BatchLog.Entry::batchId).orElse(-1L);
        if (n == c || n == c + 1) {
            return;
        }
        boolean offsetsLost = n < c;
        AppendBatchLog<?> lost = offsetsLost ? offsets : commits;
        Optional<AppendBatchLog.IncompleteTail> tail = lost.incompleteTail();
        Path path = tail.map(AppendBatchLog.IncompleteTail::file).or(lost::lastSegment).orElse(lost.directory());
        String ends = "the offset log ends at batch " + n + " and the commit log at batch " + c + ": ";
        String rule = offsetsLost ? "every committed batch has its write-ahead entry, so the offset log lost entries"
                : "a batch is planned only after the one before it is committed, so the commit log lost entries";
        throw new CheckpointException(path, ends + rule + tail.map(t -> " (" + t + ", left as it is)").orElse("")
                + "; the checkpoint is damaged");
    }

    /**
     * Locks {@code dir}, then checks its metadata against {@code expected} (or writes it for
     * a new checkpoint). Fails, naming the file, if another process holds the lock
     * ({@link CheckpointLockedException}, with the holder its lock file names), the directory
     * cannot be read or written ({@link CheckpointUnavailableException}), or the checkpoint
     * belongs to another job or partition share ({@link CheckpointException}).
     */
    public static Checkpoint open(Path dir, CheckpointMetadata expected, DurableFiles files) {
        return open(dir, expected, null, files);
    }

    /**
     * As {@link #open(Path, CheckpointMetadata, DurableFiles)}, for a checkpoint seeded from
     * {@code seed} (null for epoch 0): a new checkpoint gets the savepoint file before its
     * metadata, and an existing one must hold the same savepoint.
     */
    public static Checkpoint open(Path dir, CheckpointMetadata expected, Savepoint seed, DurableFiles files) {
        return open(dir, expected, seed, files, SEGMENT_ENTRIES);
    }

    /** As {@link #open(Path, CheckpointMetadata, Savepoint, DurableFiles)}, starting a new segment of each log every {@code segmentEntries} entries. */
    public static Checkpoint open(Path dir, CheckpointMetadata expected, Savepoint seed, DurableFiles files, int segmentEntries) {
        FileChannel channel = null;
        Path lockFile = dir.resolve(".lock");
        Path held = null;
        try {
            createDirectoriesDurably(dir, files);
            // A second channel on .lock in this JVM must never be opened: closing it (when its
            // tryLock is refused) would drop this process's lock held through the first one.
            held = dir.toRealPath();
            if (!HELD_IN_THIS_PROCESS.add(held)) {
                held = null;
                throw new CheckpointLockedException(lockFile, "held by this process, pid " + ProcessHandle.current().pid());
            }
            channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new CheckpointLockedException(lockFile, LockHolder.read(lockFile));
            }
            DurableFiles.removeTempFiles(dir);
            LockHolder.write(channel, lockFile);
            // A name a crash left linked but not yet fsync'd into the directory is made durable
            // before recovery acts on it (found by model/protocol.pml: a replayed batch whose
            // offsets entry a later power loss removes would be planned again differently).
            files.syncDirectory(dir);
            checkOrWriteSavepoint(dir.resolve(SAVEPOINT), seed, files);
            checkOrWriteMetadata(dir.resolve("metadata"), expected, files);
            return new Checkpoint(dir, held, channel, lock, files, segmentEntries);
        } catch (IOException e) {
            release(held, channel);
            throw new CheckpointUnavailableException(dir, "cannot open checkpoint: " + describe(e), e);
        } catch (RuntimeException e) {
            release(held, channel);
            throw e;
        }
    }

    /** Creates {@code dir} and any missing parents, each made durable in its parent directory. */
    private static void createDirectoriesDurably(Path dir, DurableFiles files) throws IOException {
        Path absolute = dir.toAbsolutePath();
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = absolute; p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.push(p);
        }
        while (!missing.isEmpty()) {
            Path created = missing.pop();
            Files.createDirectory(created);
            files.syncDirectory(created.getParent());
        }
    }

    private static void release(Path held, FileChannel channel) {
        closeQuietly(channel);
        if (held != null) {
            HELD_IN_THIS_PROCESS.remove(held);
        }
    }

    /** The savepoint goes in before the metadata: a checkpoint with metadata always has the savepoint it started from. */
    private static void checkOrWriteSavepoint(Path file, Savepoint seed, DurableFiles files) throws IOException {
        if (seed == null) {
            return;
        }
        if (!Files.exists(file)) {
            if (Files.exists(file.resolveSibling("metadata"))) {
                throw new CheckpointException(file, "missing, but the checkpoint has metadata: it was not seeded from a"
                        + " savepoint, so it cannot be epoch " + seed.epoch());
            }
            files.createAtomically(file, CheckpointJson.encode(seed));
            return;
        }
        Savepoint found = CheckpointJson.decode(file, Files.readAllBytes(file), Savepoint.class);
        if (!found.equals(seed)) {
            throw new CheckpointException(file, "was seeded from another savepoint (epoch " + found.epoch() + " of job '"
                    + found.jobId() + "', " + found.fromParallelism() + " -> " + found.toParallelism() + " workers) than the one"
                    + " this worker was given (epoch " + seed.epoch() + ", " + seed.fromParallelism() + " -> "
                    + seed.toParallelism() + ")");
        }
    }

    private static void checkOrWriteMetadata(Path file, CheckpointMetadata expected, DurableFiles files) throws IOException {
        if (!Files.exists(file)) {
            files.createAtomically(file, CheckpointJson.encode(expected));
            return;
        }
        CheckpointMetadata found = CheckpointJson.decode(file, Files.readAllBytes(file), CheckpointMetadata.class);
        if (found.format() != CheckpointMetadata.FORMAT) {
            throw new CheckpointException(file, "checkpoint format " + found.format() + " is not supported (expected "
                    + CheckpointMetadata.FORMAT + ")");
        }
        if (!found.jobId().equals(expected.jobId())) {
            throw new CheckpointException(file, "belongs to job '" + found.jobId() + "', not '" + expected.jobId() + "'");
        }
        if (!found.topics().equals(expected.topics())) {
            throw new CheckpointException(file, "was written for topics " + found.topics() + ", the job now reads "
                    + expected.topics() + "; start a new checkpoint to change topics");
        }
        if (found.parallelism() != expected.parallelism() || found.workerIndex() != expected.workerIndex()) {
            throw new CheckpointException(file, "was written by worker " + found.workerIndex() + " of " + found.parallelism()
                    + ", this is worker " + expected.workerIndex() + " of " + expected.parallelism()
                    + "; refusing to start (a new parallelism starts a new epoch from a savepoint: docs/protocol.md §11)");
        }
    }

    public Path directory() {
        return dir;
    }

    /** The seal of this checkpoint's epoch, if a barrier ended it. */
    public Optional<CheckpointSeal> seal() {
        return readSeal(dir);
    }

    /**
     * Seals the checkpoint at a barrier: create-only and durable, so that once a worker reports
     * the seal no batch can follow it here. Sealing again with the same seal is a no-op; another
     * one is an error.
     */
    public void seal(CheckpointSeal seal) {
        commits.awaitDurable(); // the commit the seal follows is durable before the seal is
        Path file = dir.resolve(SEALED);
        try {
            if (!files.createAtomically(file, CheckpointJson.encode(seal))) {
                CheckpointSeal found = readSeal(dir).orElseThrow();
                if (found.nextEpoch() != seal.nextEpoch() || found.batchId() != seal.batchId()
                        || !found.partitions().equals(seal.partitions())) {
                    throw new CheckpointException(file, "already sealed differently: for epoch " + found.nextEpoch()
                            + " after batch " + found.batchId());
                }
            }
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot seal checkpoint: " + describe(e), e);
        }
    }

    /** The chain points this checkpoint recovered from the consumer group before its first batch, if any. */
    public Optional<RecoveredChain> recovered() {
        return readRecovered(dir);
    }

    /** The chain points the checkpoint in {@code dir} recovered from the consumer group, read without the lock. */
    public static Optional<RecoveredChain> readRecovered(Path dir) {
        return readIfPresent(dir, RECOVERED, RecoveredChain.class);
    }

    /** The savepoint the checkpoint in {@code dir} was seeded from (epochs after the first), read without the lock. */
    public static Optional<Savepoint> readSavepoint(Path dir) {
        return readIfPresent(dir, SAVEPOINT, Savepoint.class);
    }

    /** Records {@code recovered} (create-only); returns what the checkpoint holds afterwards (an earlier record wins). */
    public RecoveredChain recover(RecoveredChain recovered) {
        Path file = dir.resolve(RECOVERED);
        try {
            files.createAtomically(file, CheckpointJson.encode(recovered));
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot write " + file + ": " + describe(e, file), e);
        }
        return recovered().orElseThrow();
    }

    /** The seal in {@code dir}, read without the lock (the file is create-only). */
    public static Optional<CheckpointSeal> readSeal(Path dir) {
        return readIfPresent(dir, SEALED, CheckpointSeal.class);
    }

    /** The create-only file {@code name} of {@code dir}, decoded, if it exists; one that does not decode is an error naming it. */
    private static <T> Optional<T> readIfPresent(Path dir, String name, Class<T> type) {
        Path file = dir.resolve(name);
        try {
            return Optional.of(CheckpointJson.decode(file, Files.readAllBytes(file), type));
        } catch (java.nio.file.NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new CheckpointUnavailableException(dir, "cannot read " + file + ": " + describe(e, file), e);
        }
    }

    /** The offset write-ahead log. */
    public AppendBatchLog<BatchOffsets> offsets() {
        return offsets;
    }

    /** The commit log. */
    public AppendBatchLog<BatchCommit> commits() {
        return commits;
    }

    /** Keeps the newest {@code retain} committed batches in both logs (and any open batch). */
    public void purge(int retain) {
        commits.latest().ifPresent(latest -> {
            long keepFrom = latest.batchId() - retain + 1;
            if (keepFrom > 0) {
                offsets.purgeBefore(keepFrom);
                commits.purgeBefore(keepFrom);
            }
        });
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        offsets.close();
        commits.close();
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel releases it too
        }
        release(held, lockChannel);
    }

    /**
     * An I/O error as a user reads it: the system's reason and the file ({@code No space left on
     * device (/checkpoint/.offsets-7.tmp)}), or, where there is no reason, what happened to which
     * file ({@code NoSuchFile: /checkpoint/offsets}, {@code AccessDenied: ...}).
     */
    static String describe(IOException e) {
        return describe(e, null);
    }

    /** {@link #describe(IOException)} for a message that names {@code subject} already: its name is not said twice. */
    static String describe(IOException e, Path subject) {
        String kind = e.getClass().getSimpleName().replace("Exception", "");
        if (e instanceof java.nio.file.FileSystemException fs) {
            if (subject != null && subject.toString().equals(fs.getFile()) && fs.getReason() != null) {
                return fs.getReason();
            }
            return fs.getReason() != null ? fs.getReason() + " (" + fs.getFile() + ")" : kind + ": " + fs.getFile();
        }
        return e.getMessage() == null ? kind : e.getMessage();
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing to do: the lock goes with the process
            }
        }
    }
}
