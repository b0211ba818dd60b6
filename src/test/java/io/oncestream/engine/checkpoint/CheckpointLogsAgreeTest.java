package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opening a checkpoint checks that its two logs end as the protocol leaves them, whatever
 * crashed (the offset log at the last commit or one batch after it), before an incomplete last
 * entry is cut off: a crash's tail is cut by the next append, while the end of a log lost to
 * damage (which can look just like it) is an error naming that log's segment, left as it is.
 */
class CheckpointLogsAgreeTest {

    private static final CheckpointMetadata METADATA =
            new CheckpointMetadata(CheckpointMetadata.FORMAT, "shop/paid-orders", List.of("orders"), 1, 0);

    @TempDir
    Path dir;

    private static BatchOffsets offsets(long n) {
        return new BatchOffsets(Map.of("orders-0", new PartitionRange(10 * n, 10 * n + 10, 1_000 * n)), 0, 1_764_700_000_000L + n);
    }

    private static BatchCommit commit(long n) {
        return new BatchCommit(10, 0, 10, 0, 5, Map.of("orders-0", 1_000 * n + 10), 1_764_700_000_000L + n);
    }

    /** A checkpoint whose offset log holds batches 0..{@code planned} and commit log 0..{@code committed}. */
    private void write(long planned, long committed) {
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            for (long n = 0; n <= planned; n++) {
                checkpoint.offsets().add(n, offsets(n));
                if (n <= committed) {
                    checkpoint.commits().add(n, commit(n));
                }
            }
        }
    }

    /** What an append a crash interrupted leaves: the first half of batch {@code n}'s frame. */
    private static long appendHalfFrame(Path segment, long n, Object entry) throws IOException {
        byte[] frame = AppendBatchLog.frame(n, CheckpointJson.encode(entry)).array();
        Files.write(segment, java.util.Arrays.copyOf(frame, frame.length / 2), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return Files.size(segment);
    }

    @Test
    void aCrashWhileAppendingTheWriteAheadEntryLeavesATailTheNextAppendCutsOff() throws IOException {
        write(1, 1);
        Path segment = dir.resolve("offsets/log-0");
        long whole = Files.size(segment);
        appendHalfFrame(segment, 2, offsets(2));

        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            assertThat(checkpoint.offsets().latest().orElseThrow().batchId()).as("the interrupted entry is not there").isEqualTo(1);
            assertThat(checkpoint.offsets().incompleteTail()).isPresent();
            checkpoint.offsets().add(2, offsets(2));
            assertThat(checkpoint.offsets().incompleteTail()).isEmpty();
        }
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            assertThat(checkpoint.offsets().batchIds()).containsExactly(0L, 1L, 2L);
            assertThat(checkpoint.offsets().get(2)).hasValue(offsets(2));
            assertThat(Files.size(segment) - whole).as("the tail was cut before the entry was appended")
                    .isEqualTo(AppendBatchLog.frame(2, CheckpointJson.encode(offsets(2))).remaining());
        }
    }

    @Test
    void aCrashWhileAppendingACommitLeavesTheBatchToReplay() throws IOException {
        write(2, 1);
        appendHalfFrame(dir.resolve("commits/log-0"), 2, commit(2));

        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            assertThat(checkpoint.offsets().latest().orElseThrow().batchId()).isEqualTo(2);
            assertThat(checkpoint.commits().latest().orElseThrow().batchId()).as("batch 2 is open: replayed").isEqualTo(1);
        }
    }

    @Test
    void aWriteAheadLogThatEndsBeforeTheLastCommitIsAnErrorNamingItsSegmentLeftAsItIs() throws IOException {
        write(0, 0);
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            checkpoint.commits().add(1, commit(1)); // as if batch 1's write-ahead entry was damaged after its commit
        }
        Path segment = dir.resolve("offsets/log-0");
        long before = Files.size(segment);
        long size = appendHalfFrame(segment, 1, offsets(1));

        for (int attempt = 0; attempt < 2; attempt++) { // the second: the lock was let go, the tail left
            assertThatThrownBy(() -> Checkpoint.open(dir, METADATA, DurableFiles.synced()))
                    .isInstanceOf(CheckpointException.class)
                    .hasMessage(segment + ": the offset log ends at batch 0 and the commit log at batch 1: every committed batch"
                            + " has its write-ahead entry, so the offset log lost entries (" + segment + ": an incomplete entry of "
                            + (size - before) + " bytes at byte " + before + ", left as it is); the checkpoint is damaged");
            assertThat(Files.size(segment)).as("nothing cut off").isEqualTo(size);
        }
    }

    @Test
    void aCommitLogThatEndsTwoBatchesBeforeTheWriteAheadLogIsAnErrorNamingItsSegment() throws IOException {
        write(1, -1);
        Path segment = dir.resolve("commits/log-0");
        long size = appendHalfFrame(segment, 0, commit(0)); // batch 0's commit, damaged: batch 1 was planned after it

        assertThatThrownBy(() -> Checkpoint.open(dir, METADATA, DurableFiles.synced()))
                .isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(segment + ": the offset log ends at batch 1 and the commit log at batch -1: a batch is"
                        + " planned only after the one before it is committed, so the commit log lost entries (")
                .satisfies(e -> assertThat(((CheckpointException) e).path()).isEqualTo(segment));
        assertThat(Files.size(segment)).as("nothing cut off").isEqualTo(size);
    }

    @Test
    void aCommitAPowerLossTookBackIsRestoredFromTheWriteAheadEntryAfterIt() throws IOException {
        // Batch 1 committed, its commit not yet durable when batch 2's write-ahead entry was; then a power loss.
        BatchCommit first = commit(0);
        BatchCommit second = new BatchCommit(10, 2, 7, 1, 6, Map.of("orders-0", 1_020L), 1_764_700_000_001L,
                new io.oncestream.contract.RecordTotals(20, 2, 17, 1));
        BatchOffsets afterSecond = new BatchOffsets(Map.of("orders-0", new PartitionRange(20, 30, 1_020L)), 0, 1_764_700_000_002L)
                .following(second);
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            checkpoint.offsets().add(0, offsets(0));
            checkpoint.commits().add(0, first);
            checkpoint.offsets().add(1, new BatchOffsets(Map.of("orders-0", new PartitionRange(10, 20, 10L)), 0, 1_764_700_000_001L));
            checkpoint.offsets().add(2, afterSecond);
        }
        appendHalfFrame(dir.resolve("commits/log-0"), 1, second); // what the power loss left of it

        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            assertThat(checkpoint.commits().batchIds()).containsExactly(0L, 1L);
            assertThat(checkpoint.commits().get(1)).as("as it was appended: offsets/2's bases are its last timestamps")
                    .hasValue(second);
            assertThat(checkpoint.offsets().latest().orElseThrow().batchId()).as("batch 2 is open: replayed").isEqualTo(2);
        }
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, DurableFiles.synced())) {
            assertThat(checkpoint.commits().get(1)).as("restored durably, once").hasValue(second);
            assertThat(checkpoint.commits().batchIds()).containsExactly(0L, 1L);
        }
    }

    @Test
    void theSameGapWithAWriteAheadEntryThatCarriesNoCommitStaysAnError() {
        write(2, 0); // an older build's entries: its commits were durable before the next batch was planned
        assertThatThrownBy(() -> Checkpoint.open(dir, METADATA, DurableFiles.synced()))
                .isInstanceOf(CheckpointException.class)
                .hasMessage(dir.resolve("commits/log-0") + ": the offset log ends at batch 2 and the commit log at batch 0: a batch"
                        + " is planned only after the one before it is committed, so the commit log lost entries; the checkpoint is damaged");
    }

    @Test
    void anEmptiedLastSegmentIsNamed() throws IOException {
        write(1, 1);
        Path segment = dir.resolve("offsets/log-0");
        Files.write(segment, new byte[0]);

        assertThatThrownBy(() -> Checkpoint.open(dir, METADATA, DurableFiles.synced()))
                .isInstanceOf(CheckpointException.class)
                .hasMessage(segment + ": the offset log ends at batch -1 and the commit log at batch 1: every committed batch"
                        + " has its write-ahead entry, so the offset log lost entries; the checkpoint is damaged");
    }
}
