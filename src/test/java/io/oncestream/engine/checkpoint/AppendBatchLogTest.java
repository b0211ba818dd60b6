package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.oncestream.testing.GoldenCheckpoint;

/**
 * The appended batch log: entries read back as written, across reopening and segments; what a
 * crash can leave (the last frame incomplete) is cut off, and nothing else is; damage elsewhere
 * is an error naming the segment and the byte; entries of an older build's files are read too.
 */
class AppendBatchLogTest {

    @TempDir
    Path dir;

    private static BatchCommit commit(long n) {
        return new BatchCommit(n, 0, n, 0, 5, Map.of("t-0", 10 * n), 1_764_700_000_000L + n);
    }

    private AppendBatchLog<BatchCommit> open(int segmentEntries) {
        return new AppendBatchLog<>(dir.resolve("commits"), BatchCommit.class, DurableFiles.synced(), segmentEntries);
    }

    @Test
    void entriesAreAppendedInOrderCreateOnlyAndSurviveReopening() {
        AppendBatchLog<BatchCommit> log = open(100);
        for (long n = 0; n < 5; n++) {
            assertThat(log.add(n, commit(n))).isTrue();
        }
        assertThat(log.add(3, commit(99))).as("an entry is never replaced").isFalse();
        assertThatThrownBy(() -> log.add(-1, commit(1))).isInstanceOf(IllegalArgumentException.class);
        log.close();

        AppendBatchLog<BatchCommit> reopened = open(100);
        assertThat(reopened.batchIds()).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(reopened.get(3)).hasValue(commit(3));
        assertThat(reopened.latest()).hasValue(new BatchLog.Entry<>(4L, commit(4)));
        assertThat(reopened.get(7)).isEmpty();
        assertThat(files()).containsExactly("log-0");
        assertThat(reopened.add(5, commit(5))).isTrue();
        reopened.close();
        assertThat(open(100).latest()).hasValue(new BatchLog.Entry<>(5L, commit(5)));
    }

    @Test
    void anEntryAddedLazilyIsReadAtOnceAndEveryLaterAppendWaitsUntilItIsDurable() {
        AppendBatchLog<BatchCommit> log = open(2);
        assertThat(log.addLazily(0, commit(0))).isTrue();
        assertThat(log.latest()).as("read before its sync is known to be done").hasValue(new BatchLog.Entry<>(0L, commit(0)));
        assertThat(log.addLazily(1, commit(1))).isTrue();
        assertThat(log.addLazily(1, commit(99))).as("an entry is never replaced").isFalse();
        assertThat(log.addLazily(2, commit(2))).as("into a new segment").isTrue();
        log.awaitDurable();
        log.awaitDurable(); // nothing pending: returns at once
        log.add(3, commit(3));
        assertThat(log.addLazily(4, commit(4))).isTrue();
        log.close(); // waits for batch 4's sync
        assertThat(files()).containsExactly("log-0", "log-2", "log-4");
        AppendBatchLog<BatchCommit> reopened = open(2);
        assertThat(reopened.batchIds()).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(reopened.get(4)).hasValue(commit(4));
        assertThat(reopened.incompleteTail()).isEmpty();
        reopened.close();
    }

    @Test
    void segmentsRollOverAndWholeSegmentsBelowTheCutArePurged() {
        AppendBatchLog<BatchCommit> log = open(3);
        for (long n = 0; n < 8; n++) {
            log.add(n, commit(n));
        }
        assertThat(files()).containsExactly("log-0", "log-3", "log-6");
        log.purgeBefore(5);
        assertThat(files()).as("log-3 still holds batch 5").containsExactly("log-3", "log-6");
        assertThat(log.batchIds()).containsExactly(5L, 6L, 7L);
        log.purgeBefore(100);
        assertThat(files()).as("the segment being appended to stays").containsExactly("log-6");
        assertThat(log.batchIds()).isEmpty();
        log.add(8, commit(8));
        log.close();
        assertThat(open(3).batchIds()).as("kept entries of a kept segment come back: below the latest, ignored by planning")
                .containsExactly(6L, 7L, 8L);
    }

    /**
     * What a crash can leave at the end of the last segment: ignored, said where it is, and cut
     * off by the next append (not at opening, so that a checkpoint whose logs do not agree
     * keeps it for inspection); the entries before it stand.
     */
    @ParameterizedTest
    @EnumSource(Tail.class)
    void anIncompleteLastFrameIsCutOffAndNothingBeforeIt(Tail tail) throws IOException {
        Path segment = threeEntries();
        long size = Files.size(segment);
        appendRaw(segment, tail.bytes(AppendBatchLog.frame(3, CheckpointJson.encode(commit(3)))));

        assertThat(AppendBatchLog.readOnly(dir.resolve("commits"), BatchCommit.class).batchIds())
                .as("read only: ignored, left as it is").containsExactly(0L, 1L, 2L);
        assertThat(Files.size(segment)).isGreaterThan(size);

        AppendBatchLog<BatchCommit> reopened = open(100);
        assertThat(reopened.batchIds()).containsExactly(0L, 1L, 2L);
        assertThat(reopened.incompleteTail()).hasValue(new AppendBatchLog.IncompleteTail(segment, size,
                tail.bytes(AppendBatchLog.frame(3, CheckpointJson.encode(commit(3)))).length));
        assertThat(Files.size(segment)).as("not cut off by opening").isGreaterThan(size);
        assertThat(reopened.add(3, commit(3))).isTrue();
        assertThat(reopened.incompleteTail()).isEmpty();
        reopened.close();
        assertThat(open(100).latest()).hasValue(new BatchLog.Entry<>(3L, commit(3)));
    }

    /** The ways an append can be left incomplete by a crash. */
    enum Tail {
        HALF_A_HEADER, HALF_A_FRAME, WHOLE_FRAME_LAST_BYTE_WRONG, ZEROS;

        byte[] bytes(ByteBuffer frame) {
            byte[] whole = new byte[frame.remaining()];
            frame.get(whole);
            return switch (this) {
                case HALF_A_HEADER -> java.util.Arrays.copyOf(whole, AppendBatchLog.HEADER_BYTES / 2);
                case HALF_A_FRAME -> java.util.Arrays.copyOf(whole, whole.length / 2);
                case WHOLE_FRAME_LAST_BYTE_WRONG -> {
                    whole[whole.length - 1] ^= 0x55;
                    yield whole;
                }
                case ZEROS -> new byte[whole.length];
            };
        }
    }

    /** A bad frame with a good one after it is not what a crash leaves: an error naming the segment and the byte, nothing cut. */
    @Test
    void damageBeforeTheLastFrameIsAnErrorNamingTheSegmentAndByte() throws IOException {
        Path segment = threeEntries();
        long size = Files.size(segment);
        int frame = AppendBatchLog.HEADER_BYTES + CheckpointJson.encode(commit(0)).length;
        flipByte(segment, frame + AppendBatchLog.HEADER_BYTES + 5); // inside batch 1's entry

        assertThatThrownBy(() -> open(100)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(segment + ": damaged at byte " + frame + " (a checksum that does not match)");
        assertThat(Files.size(segment)).as("nothing cut off").isEqualTo(size);

        // A length that runs past the end, with good frames after it: damage too, not a crash's tail.
        flipByte(segment, frame + AppendBatchLog.HEADER_BYTES + 5);
        ByteBuffer huge = ByteBuffer.allocate(4).putInt(0, 1 << 20);
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.write(huge, frame);
        }
        assertThatThrownBy(() -> open(100)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining("damaged at byte " + frame + " (a frame of 1048576 bytes running past the end of the file)");
        assertThat(Files.size(segment)).isEqualTo(size);
    }

    @Test
    void damageInASegmentBeforeTheLastIsAnErrorEvenAtItsEnd() throws IOException {
        AppendBatchLog<BatchCommit> log = open(2);
        for (long n = 0; n < 3; n++) {
            log.add(n, commit(n));
        }
        log.close();
        appendRaw(dir.resolve("commits/log-0"), new byte[] {1, 2, 3});
        assertThatThrownBy(() -> open(2)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(dir.resolve("commits/log-0") + ": damaged at byte ");
    }

    /** A checkpoint of an older build, one file per batch: read as it is, appended to in a segment, its files purged. */
    @Test
    void entriesOfAnOlderBuildsFilesAreReadAndPurged() throws IOException {
        Path commits = Files.createDirectories(dir.resolve("commits"));
        Files.copy(GoldenCheckpoint.directory().resolve("commits/0"), commits.resolve("0"));
        AppendBatchLog<BatchCommit> log = open(100);
        assertThat(log.latest()).hasValueSatisfying(e -> assertThat(e.batchId()).isZero());
        log.add(1, commit(1));
        log.close();
        AppendBatchLog<BatchCommit> reopened = open(100);
        assertThat(reopened.batchIds()).containsExactly(0L, 1L);
        assertThat(reopened.get(0)).isEqualTo(FileBatchLog.readOnly(commits, BatchCommit.class).get(0));
        reopened.purgeBefore(1);
        assertThat(files()).containsExactly("log-1");
        assertThatThrownBy(() -> reopened.add(0, commit(0))).as("entries go in order").isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A process crash at each point of an append: before the frame is whole the entry is gone
     * after the restart (the tail cut off), from then on it is there, and the log goes on.
     */
    @ParameterizedTest
    @EnumSource(DurableFiles.AppendPoint.class)
    void aCrashAtEachPointOfAnAppendLeavesTheEntryWholeOrAbsent(DurableFiles.AppendPoint point) {
        AppendBatchLog<BatchCommit> log = new AppendBatchLog<>(dir.resolve("commits"), BatchCommit.class,
                DurableFiles.failingAppendAt((p, file, start) -> {
                    if (p == point) {
                        throw new IllegalStateException("crash at " + p);
                    }
                }), 100);
        assertThatThrownBy(() -> log.add(0, commit(0))).hasMessage("crash at " + point);
        log.close();
        AppendBatchLog<BatchCommit> restarted = open(100);
        if (point == DurableFiles.AppendPoint.HALF_WRITTEN) {
            assertThat(restarted.batchIds()).isEmpty();
        } else {
            assertThat(restarted.get(0)).hasValue(commit(0));
        }
        restarted.add(1, commit(1));
        restarted.close();
        assertThat(open(100).latest()).hasValue(new BatchLog.Entry<>(1L, commit(1)));
    }

    /**
     * Two writers on one log, which the checkpoint's lock prevents (a volume whose locks do not
     * work would not): the second finds the segment grown by the other's entry and stops before
     * appending, as the create-only name of an older build's file stopped it.
     */
    @Test
    void aSecondWriterFindsTheSegmentGrownAndStops() {
        AppendBatchLog<BatchCommit> first = open(100);
        first.add(0, commit(0));
        AppendBatchLog<BatchCommit> second = open(100);
        first.add(1, commit(1));

        assertThatThrownBy(() -> second.add(1, commit(1)))
                .isInstanceOf(CheckpointException.class)
                .hasMessageContaining("commits/log-0: holds ")
                .hasMessageContaining("another process is appending to this checkpoint");
        first.close();
        second.close();
        assertThat(open(100).batchIds()).containsExactly(0L, 1L);
    }

    @Test
    void aStrayFileIsAnError() throws IOException {
        Files.createDirectories(dir.resolve("commits"));
        Files.writeString(dir.resolve("commits/notes.txt"), "x");
        assertThatThrownBy(() -> open(100)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(dir.resolve("commits/notes.txt") + ": unexpected file in a batch log");
    }

    private List<String> files() {
        try (Stream<Path> list = Files.list(dir.resolve("commits"))) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A log of batches 0, 1 and 2 in one segment, closed; returns the segment. */
    private Path threeEntries() {
        AppendBatchLog<BatchCommit> log = open(100);
        for (long n = 0; n < 3; n++) {
            log.add(n, commit(n));
        }
        log.close();
        return dir.resolve("commits/log-0");
    }

    private static void appendRaw(Path file, byte[] bytes) throws IOException {
        Files.write(file, bytes, StandardOpenOption.APPEND);
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x55)).position(0);
            channel.write(one, at);
        }
    }
}
