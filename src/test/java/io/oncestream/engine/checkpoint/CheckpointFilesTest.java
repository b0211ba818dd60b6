package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.contract.RecordTotals;
import io.oncestream.testing.GoldenCheckpoint;

/** The on-disk format of checkpoints (golden files), create-only writes, locking and metadata checks. */
class CheckpointFilesTest {

    private static final CheckpointMetadata GOLDEN_METADATA =
            new CheckpointMetadata(1, "shop/paid-orders", List.of("payments", "orders"), 2, 1);

    @TempDir
    Path dir;

    @Test
    void goldenCheckpointReadsAsExpected() throws Exception {
        Path golden = copyGolden();
        try (Checkpoint cp = Checkpoint.open(golden, GOLDEN_METADATA, DurableFiles.synced())) {
            assertThat(cp.offsets().batchIds()).containsExactly(0L, 1L);
            assertThat(cp.commits().latest()).hasValueSatisfying(e -> {
                assertThat(e.batchId()).isZero();
                assertThat(e.value()).isEqualTo(new BatchCommit(200, 50, 140, 10, 321,
                        Map.of("orders-1", 1764700000123001L, "payments-0", 1764700000456000L), 1764700000900L));
            });
            assertThat(cp.offsets().get(1)).hasValue(new BatchOffsets(Map.of(
                    "orders-1", new PartitionRange(120, 200, 1764700000123001L),
                    "payments-0", new PartitionRange(80, 80, 1764700000456000L)), 0, 1764700001000L));
        }
    }

    @Test
    void writerProducesTheGoldenBytes() throws Exception {
        Path golden = GoldenCheckpoint.directory();
        for (String name : List.of("offsets/0", "offsets/1", "commits/0", "metadata")) {
            Class<?> type = name.startsWith("offsets") ? BatchOffsets.class
                    : name.startsWith("commits") ? BatchCommit.class : CheckpointMetadata.class;
            Object value = CheckpointJson.decode(golden.resolve(name), Files.readAllBytes(golden.resolve(name)), type);
            assertThat(new String(CheckpointJson.encode(value))).as(name).isEqualTo(Files.readString(golden.resolve(name)));
        }
    }

    @Test
    void entriesAreCreateOnlyAndSurviveReopening() {
        FileBatchLog<BatchCommit> log = new FileBatchLog<>(dir.resolve("commits"), BatchCommit.class, DurableFiles.synced());
        BatchCommit first = new BatchCommit(1, 0, 1, 0, 5, Map.of("t-0", 10L), 99);
        BatchCommit second = new BatchCommit(2, 0, 2, 0, 5, Map.of("t-0", 20L), 99);

        assertThat(log.add(3, first)).isTrue();
        assertThat(log.add(3, second)).isFalse();

        FileBatchLog<BatchCommit> reopened = new FileBatchLog<>(dir.resolve("commits"), BatchCommit.class, DurableFiles.synced());
        assertThat(reopened.get(3)).hasValue(first);
        assertThat(reopened.get(4)).isEmpty();
    }

    /**
     * Totals came after v1's first files: a commit with them reads back with them; one without
     * (every golden commit) reads as null and is written back byte for byte.
     */
    @Test
    void commitTotalsRoundTripAndOlderCommitsHaveNone() throws Exception {
        BatchCommit withTotals = new BatchCommit(10, 2, 7, 1, 5, Map.of("t-0", 20L), 99, new RecordTotals(110, 12, 87, 11));
        Path file = dir.resolve("c");
        byte[] bytes = CheckpointJson.encode(withTotals);
        assertThat(new String(bytes)).contains("\"totals\":{\"read\":110,\"filteredOut\":12,\"written\":87,\"deadLettered\":11}");
        assertThat(CheckpointJson.decode(file, bytes, BatchCommit.class)).isEqualTo(withTotals);

        Path golden = GoldenCheckpoint.directory().resolve("commits/0");
        assertThat(CheckpointJson.decode(golden, Files.readAllBytes(golden), BatchCommit.class).totals()).isNull();
        assertThatThrownBy(() -> CheckpointJson.decode(file, "v1\n{\"recordsRead\":1}\n".getBytes(), BatchCommit.class))
                .as("only the added field may be missing").hasMessageContaining("Missing");
    }

    @Test
    void purgeKeepsTheNewestCommittedBatches() {
        try (Checkpoint cp = Checkpoint.open(dir, GOLDEN_METADATA, DurableFiles.synced())) {
            for (long id = 0; id < 6; id++) {
                cp.offsets().add(id, new BatchOffsets(Map.of(), 0, 0));
                cp.commits().add(id, new BatchCommit(0, 0, 0, 0, 0, Map.of(), 0));
            }
            cp.offsets().add(6, new BatchOffsets(Map.of(), 0, 0)); // open batch
            cp.purge(2);
            assertThat(cp.offsets().batchIds()).containsExactly(4L, 5L, 6L);
            assertThat(cp.commits().batchIds()).containsExactly(4L, 5L);
        }
    }

    @Test
    void latestFollowsWritesAndPurgesAndAgreesWithAFreshListing() {
        FileBatchLog<BatchCommit> log = new FileBatchLog<>(dir.resolve("commits"), BatchCommit.class, DurableFiles.synced());
        assertThat(log.latest()).isEmpty();
        for (long id = 0; id < 5; id++) {
            log.add(id, new BatchCommit(id, 0, id, 0, 5, Map.of("t-0", id * 10), 99));
            assertThat(log.latest()).get().extracting(BatchLog.Entry::batchId).isEqualTo(id);
        }
        log.purgeBefore(3);
        log.add(5, new BatchCommit(5, 0, 5, 0, 5, Map.of("t-0", 50L), 99));
        log.purgeBefore(4);
        assertThat(log.batchIds()).containsExactly(4L, 5L);

        FileBatchLog<BatchCommit> fresh = new FileBatchLog<>(dir.resolve("commits"), BatchCommit.class, DurableFiles.synced());
        assertThat(log.latest()).isEqualTo(fresh.latest());
        assertThat(log.latest()).get().extracting(e -> e.value().recordsRead()).isEqualTo(5L);
    }

    @Test
    void corruptFilesAreErrorsThatNameTheFile() throws IOException {
        FileBatchLog<BatchOffsets> log = new FileBatchLog<>(dir.resolve("offsets"), BatchOffsets.class, DurableFiles.synced());
        Path offsets = dir.resolve("offsets");
        Files.writeString(offsets.resolve("0"), "");
        Files.writeString(offsets.resolve("1"), "v2\n{}\n");
        Files.writeString(offsets.resolve("2"), "v1\n{\"partitions\": {\"t-0\": {\"start\": 5, \"end\": ");
        Files.writeString(offsets.resolve("3"), "v1\n{\"partitions\": {\"t-0\": {\"start\": 9, \"end\": 2, \"timestampBase\": 0}},"
                + " \"lostRecords\": 0, \"plannedAtMs\": 0}\n");

        assertThatThrownBy(() -> log.get(0)).isInstanceOf(CheckpointException.class)
                .hasMessage(offsets.resolve("0") + ": file is empty");
        assertThatThrownBy(() -> log.get(1)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(offsets.resolve("1") + ": unsupported version line 'v2'");
        assertThatThrownBy(() -> log.get(2)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(offsets.resolve("2") + ": not a valid BatchOffsets");
        assertThatThrownBy(() -> log.get(3)).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(offsets.resolve("3") + ": not a valid BatchOffsets");
        assertThatThrownBy(log::latest).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(offsets.resolve("3").toString());

        Files.write(offsets.resolve("4"), new byte[] {0, 0, 'v', '1', 7, '\n', '{', '}', '\n'});
        assertThatThrownBy(() -> log.get(4)).isInstanceOf(CheckpointException.class)
                .hasMessage(offsets.resolve("4") + ": unsupported version line '\\u0000\\u0000v1\\u0007' (this worker reads v1)");

        Files.writeString(offsets.resolve("notes.txt"), "x");
        assertThatThrownBy(log::batchIds).isInstanceOf(CheckpointException.class)
                .hasMessage(offsets.resolve("notes.txt") + ": unexpected file in a batch log (names are batch ids)");
    }

    @Test
    void tempFilesOfACrashedWriteAreRemovedOnOpen() throws IOException {
        Path offsets = Files.createDirectories(dir.resolve("offsets"));
        Files.writeString(offsets.resolve(".7" + DurableFiles.TEMP_MARK + "abc"), "v1\n{");
        FileBatchLog<BatchOffsets> log = new FileBatchLog<>(offsets, BatchOffsets.class, DurableFiles.synced());
        assertThat(log.batchIds()).isEmpty();
        try (Stream<Path> files = Files.list(offsets)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void secondOpenOfALockedCheckpointIsRefused() {
        try (Checkpoint ignored = Checkpoint.open(dir, GOLDEN_METADATA, DurableFiles.synced())) {
            assertThatThrownBy(() -> Checkpoint.open(dir, GOLDEN_METADATA, DurableFiles.synced()))
                    .isInstanceOf(CheckpointLockedException.class)
                    .hasMessage(dir.resolve(".lock") + ": the checkpoint is in use by another worker process (held by this"
                            + " process, pid " + ProcessHandle.current().pid() + ")");
        }
        Checkpoint.open(dir, GOLDEN_METADATA, DurableFiles.synced()).close();
    }

    @Test
    void checkpointOfAnotherJobOrShareIsRefused() {
        Checkpoint.open(dir, GOLDEN_METADATA, DurableFiles.synced()).close();

        assertThatThrownBy(() -> Checkpoint.open(dir, new CheckpointMetadata(1, "shop/other", List.of("orders", "payments"), 2, 1),
                DurableFiles.synced())).hasMessageContaining("belongs to job 'shop/paid-orders', not 'shop/other'");
        assertThatThrownBy(() -> Checkpoint.open(dir, new CheckpointMetadata(1, "shop/paid-orders", List.of("orders"), 2, 1),
                DurableFiles.synced())).hasMessageContaining("was written for topics [orders, payments]");
        assertThatThrownBy(() -> Checkpoint.open(dir, new CheckpointMetadata(1, "shop/paid-orders", List.of("orders", "payments"), 3, 1),
                DurableFiles.synced())).isInstanceOf(CheckpointException.class)
                .hasMessage(dir.resolve("metadata") + ": was written by worker 1 of 2, this is worker 1 of 3; refusing to start"
                        + " (a new parallelism starts a new epoch from a savepoint: docs/protocol.md §11)");
    }

    private Path copyGolden() {
        return GoldenCheckpoint.copyTo(dir.resolve("golden"));
    }

}
