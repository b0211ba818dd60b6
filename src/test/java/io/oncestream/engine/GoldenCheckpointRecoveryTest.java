package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.testing.GoldenCheckpoint;

/**
 * Recovery planned from the golden checkpoints ({@code src/test/resources/checkpoint/golden},
 * one file per batch as older builds wrote it, and {@code golden-appended}, the same entries in
 * segments: worker 1 of 2 of {@code shop/paid-orders}, batch 0 committed, batch 1 open on
 * {@code orders-1 [120, 200)} and an empty {@code payments-0 [80, 80)}), as they would be found
 * after a crash: the engine replays batch 1 with exactly the recorded ranges and write-timestamp
 * bases, although the source now holds more, then continues from its ends; and a golden file
 * that is damaged stops the worker with an error naming that file, before anything is read,
 * written or overwritten (except the one damage a crash's tail looks like, shown harmless).
 */
class GoldenCheckpointRecoveryTest {

    private static final JobConfig JOB = JobConfigs.parse("""
            {
              "jobId": "shop/paid-orders",
              "source": {"bootstrapServers": "unused:9092", "topics": ["payments", "orders"]},
              "filter": "value.status == 'PAID'",
              "sink": {"contactPoints": ["unused:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "paid_orders",
                       "columns": {"id": "value.id", "amount": "value.amount"}},
              "deadLetter": {"mode": "table", "table": "paid_orders_dead_letters"},
              "trigger": {"intervalMs": 0, "availableNow": true},
              "parallelism": 2
            }
            """);
    private static final CheckpointMetadata METADATA = new CheckpointMetadata(CheckpointMetadata.FORMAT, JOB.jobId(),
            JOB.source().topics(), JOB.parallelism(), 1);
    private static final RecordTransformer TRANSFORMER = RecordTransformer.compile(JOB);

    /** The bases {@code offsets/1} records (the last timestamps of {@code commits/0}). */
    private static final long ORDERS_BASE = 1764700000123001L;
    private static final long PAYMENTS_BASE = 1764700000456000L;
    /** Orders records carry a timestamp below their base, so theirs continue it by +1; payments ones are above theirs. */
    private static final long ORDERS_RECORD_MS = 1764700000000L;
    private static final long PAYMENTS_RECORD_MS = 1764700005000L;
    private static final long ORDERS_LATEST = 230;
    private static final long PAYMENTS_LATEST = 95;

    @TempDir
    Path dir;

    /** The golden checkpoint of each format a build wrote, and the file that holds batch 1's write-ahead entry. */
    enum Format {
        FILES_PER_BATCH("offsets/1"), APPENDED("offsets/log-0");

        final String openEntryFile;

        Format(String openEntryFile) {
            this.openEntryFile = openEntryFile;
        }

        Path copyTo(Path target) {
            return this == FILES_PER_BATCH ? GoldenCheckpoint.copyTo(target) : GoldenCheckpoint.copyAppendedTo(target);
        }
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void openBatchOfTheGoldenCheckpointIsReplayedExactlyThenTheJobContinues(Format format) throws Exception {
        Path checkpoint = format.copyTo(dir.resolve("checkpoint"));
        CheckpointOnDisk disk = new CheckpointOnDisk(checkpoint);
        BatchOffsets open = disk.offsets(1);
        assertThat(open.partitions()).isEqualTo(Map.of(
                "orders-1", new PartitionRange(120, 200, ORDERS_BASE),
                "payments-0", new PartitionRange(80, 80, PAYMENTS_BASE)));
        byte[] openBytes = Files.readAllBytes(checkpoint.resolve(format.openEntryFile));
        InMemorySource source = source();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 7, 3);

        assertThat(run(checkpoint, source, table)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        assertThat(source.reads()).as("batch 1 replayed, then batch 2").containsExactly(
                open.partitions(),
                Map.of("orders-1", new PartitionRange(200, ORDERS_LATEST, ORDERS_BASE + 80),
                        "payments-0", new PartitionRange(80, PAYMENTS_LATEST, PAYMENTS_BASE)));
        for (long offset = 120; offset < 200; offset++) {
            Long ts = table.timestampOf("orders-1", offset);
            if (ts != null) {
                assertThat(ts).as("write timestamp of orders-1@" + offset).isEqualTo(ORDERS_BASE + 1 + (offset - 120));
            }
        }
        assertThat(table.timestampOf("orders-1", 121)).as("a written record of the replay").isNotNull();
        assertThat(table.timestampOf("payments-0", 80)).isEqualTo((PAYMENTS_RECORD_MS + 80) * 1000);

        assertThat(Files.readAllBytes(checkpoint.resolve(format.openEntryFile))).as("the open batch's entry is kept as it was")
                .startsWith(openBytes);
        assertThat(disk.offsets(1)).isEqualTo(open);
        assertThat(disk.batchIds("offsets")).containsExactly(0L, 1L, 2L);
        assertThat(disk.batchIds("commits")).containsExactly(0L, 1L, 2L);
        assertThat(disk.commit(1).lastTimestamps()).isEqualTo(Map.of("orders-1", ORDERS_BASE + 80, "payments-0", PAYMENTS_BASE));
        assertThat(disk.commit(1).recordsRead()).isEqualTo(80);
        assertThat(table.rows()).isEqualTo(expectedRows());
        assertThat(table.deadLetters()).isEmpty();
        assertThat(source.groupOffsets()).isEqualTo(Map.of("orders-1", ORDERS_LATEST, "payments-0", PAYMENTS_LATEST));
    }

    static Stream<Arguments> corruptions() {
        return Stream.of("metadata", "offsets/0", "offsets/1", "commits/0").flatMap(file ->
                Stream.of(Corruption.values()).map(c -> Arguments.of(file, c)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("corruptions")
    void corruptGoldenFileIsAnErrorNamingIt(String file, Corruption corruption) throws Exception {
        Path checkpoint = Format.FILES_PER_BATCH.copyTo(dir.resolve("checkpoint"));
        Path corrupt = checkpoint.resolve(file);
        byte[] bytes = corruption.apply(Files.readAllBytes(corrupt));
        Files.write(corrupt, bytes);

        assertRefusedNamingIt(checkpoint, corrupt, bytes);
        assertThat(new CheckpointOnDisk(checkpoint).batchIds("offsets")).containsExactly(0L, 1L);
    }

    /**
     * Runs the engine on {@code checkpoint}, whose {@code damaged} file holds {@code bytes}:
     * an error naming that file, nothing read or written, the file left for inspection.
     * Returns the error, for what a caller checks more.
     */
    private CheckpointException assertRefusedNamingIt(Path checkpoint, Path damaged, byte[] bytes) throws Exception {
        InMemorySource source = source();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 7, 3);
        Throwable refused = catchThrowable(() -> run(checkpoint, source, table));
        assertThat(refused).isInstanceOf(CheckpointException.class).hasMessageStartingWith(damaged + ": ");
        assertThat(((CheckpointException) refused).path()).isEqualTo(damaged);
        assertThat(source.reads()).isEmpty();
        assertThat(table.timestampsByRecord()).isEmpty();
        assertThat(Files.readAllBytes(damaged)).as("the damaged file is left for inspection").isEqualTo(bytes);
        return (CheckpointException) refused;
    }

    /**
     * Damage to the appended golden checkpoint that leaves its logs disagreeing: an error naming
     * the segment, before anything is read or written, the segment left as it is.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "offsets/log-0, GARBLED_FIRST_ENTRY", // a bad frame with a good one after it
        "offsets/log-0, EMPTY", // commit 0 without its write-ahead entry
        "commits/log-0, GARBLED_FIRST_ENTRY", // its only frame: batch 1 was planned after a commit now unreadable
        "commits/log-0, EMPTY",
    })
    void damageThatLeavesTheAppendedLogsDisagreeingIsAnErrorNamingTheSegment(String file, SegmentDamage damage) throws Exception {
        Path checkpoint = Format.APPENDED.copyTo(dir.resolve("checkpoint"));
        Path segment = checkpoint.resolve(file);
        byte[] bytes = damage.apply(Files.readAllBytes(segment));
        Files.write(segment, bytes);

        assertThat(assertRefusedNamingIt(checkpoint, segment, bytes)).hasMessageContaining("damaged");
    }

    /**
     * The write-ahead log's last entry cut in half is what a crash while appending it leaves, and
     * the engine cannot tell the two apart: batch 1 is planned afresh from commit 0, starting
     * where the lost entry started, with the same write-timestamp bases. So the rows of records
     * the lost entry covered are written with the same timestamps as a replay would write them:
     * the table ends as it would have, nothing lost and nothing applied twice.
     */
    @Test
    void aWriteAheadEntryCutAtTheEndOfTheLogIsPlannedAgainWithTheSameTimestamps() throws Exception {
        Path checkpoint = Format.APPENDED.copyTo(dir.resolve("checkpoint"));
        Path segment = checkpoint.resolve("offsets/log-0");
        byte[] whole = Files.readAllBytes(segment);
        int firstFrame = 16 + java.nio.ByteBuffer.wrap(whole).getInt(0);
        Files.write(segment, Arrays.copyOf(whole, firstFrame + (whole.length - firstFrame) / 2));
        InMemorySource source = source();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 7, 3);

        assertThat(run(checkpoint, source, table)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        assertThat(source.reads()).as("batch 1 planned from commit 0's ends, to the latest").containsExactly(Map.of(
                "orders-1", new PartitionRange(120, ORDERS_LATEST, ORDERS_BASE),
                "payments-0", new PartitionRange(80, PAYMENTS_LATEST, PAYMENTS_BASE)));
        for (long offset = 120; offset < ORDERS_LATEST; offset++) {
            Long ts = table.timestampOf("orders-1", offset);
            if (ts != null) {
                assertThat(ts).as("write timestamp of orders-1@" + offset).isEqualTo(ORDERS_BASE + 1 + (offset - 120));
            }
        }
        assertThat(table.rows()).isEqualTo(expectedRows());
        assertThat(new CheckpointOnDisk(checkpoint).batchIds("offsets")).containsExactly(0L, 1L);
    }

    /**
     * {@code golden-restore}: the appended golden checkpoint after this build replayed batch 1,
     * committed it and planned batch 2 ({@code orders-1 [200, 230)}, {@code payments-0 [80, 95)}),
     * whose write-ahead entry carries the commit of batch 1; then a power loss took that commit
     * back before its {@code fdatasync} (the commit log holds batch 0 only). The commit is
     * restored from {@code offsets/2}, batch 2 is replayed with its recorded ranges and bases,
     * and the counts since the job started are exact.
     */
    @Test
    void aCommitAPowerLossTookBackIsRestoredFromTheNextWriteAheadEntryAndTheOpenBatchReplayed() throws Exception {
        Path checkpoint = GoldenCheckpoint.copyRestoreTo(dir.resolve("checkpoint"));
        CheckpointOnDisk disk = new CheckpointOnDisk(checkpoint);
        assertThat(disk.batchIds("offsets")).containsExactly(0L, 1L, 2L);
        assertThat(disk.batchIds("commits")).containsExactly(0L);
        BatchOffsets open = disk.offsets(2);
        InMemorySource source = source();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 7, 3);

        assertThat(run(checkpoint, source, table)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        assertThat(source.reads()).as("batch 2 replayed, nothing else").containsExactly(open.partitions());
        assertThat(open.partitions()).isEqualTo(Map.of(
                "orders-1", new PartitionRange(200, ORDERS_LATEST, ORDERS_BASE + 80),
                "payments-0", new PartitionRange(80, PAYMENTS_LATEST, PAYMENTS_BASE)));
        assertThat(disk.batchIds("commits")).containsExactly(0L, 1L, 2L);
        assertThat(disk.commit(1).lastTimestamps()).isEqualTo(Map.of("orders-1", ORDERS_BASE + 80, "payments-0", PAYMENTS_BASE));
        assertThat(disk.commit(1).recordsRead()).isEqualTo(80);
        assertThat(disk.commit(1).totals().read()).as("batch 0's 200 and batch 1's 80").isEqualTo(280);
        assertThat(disk.commit(2).totals().read()).as("and batch 2's 45, once").isEqualTo(280 + 30 + 15);
        for (long offset = 200; offset < ORDERS_LATEST; offset++) {
            Long ts = table.timestampOf("orders-1", offset);
            if (ts != null) {
                assertThat(ts).as("write timestamp of orders-1@" + offset).isEqualTo(ORDERS_BASE + 81 + (offset - 200));
            }
        }
        assertThat(table.rows()).isEqualTo(rowsOf(200, 80));
        assertThat(source.groupOffsets()).isEqualTo(Map.of("orders-1", ORDERS_LATEST, "payments-0", PAYMENTS_LATEST));
    }

    /** Ways a segment can be damaged. */
    enum SegmentDamage {
        EMPTY, GARBLED_FIRST_ENTRY;

        byte[] apply(byte[] bytes) {
            if (this == EMPTY) {
                return new byte[0];
            }
            byte[] garbled = bytes.clone();
            garbled[16 + 5] ^= 0x55; // inside the first frame's entry
            return garbled;
        }
    }

    /** Ways a file can be damaged. */
    enum Corruption {
        EMPTY {
            @Override
            byte[] apply(byte[] bytes) {
                return new byte[0];
            }
        },
        CUT_IN_HALF {
            @Override
            byte[] apply(byte[] bytes) {
                return Arrays.copyOf(bytes, bytes.length / 2);
            }
        },
        /** A NUL byte in the middle, which no JSON document holds raw. */
        GARBLED {
            @Override
            byte[] apply(byte[] bytes) {
                byte[] garbled = bytes.clone();
                garbled[garbled.length / 2] = 0;
                return garbled;
            }
        },
        /** Zeros for the first bytes, as a torn write might leave. */
        ZEROED_START {
            @Override
            byte[] apply(byte[] bytes) {
                byte[] zeroed = bytes.clone();
                Arrays.fill(zeroed, 0, Math.min(8, zeroed.length), (byte) 0);
                return zeroed;
            }
        };

        abstract byte[] apply(byte[] bytes);
    }

    private MicroBatchEngine.Outcome run(Path checkpointDir, InMemorySource source, RowSink sink) {
        try (Checkpoint checkpoint = Checkpoint.open(checkpointDir, METADATA, DurableFiles.synced())) {
            long[] clock = {1_764_800_000_000L};
            return new MicroBatchEngine(JOB, checkpoint, new Pipeline(source, TRANSFORMER, sink),
                    new Controls(ProtocolHooks.NONE, new ProgressTracker(JOB.jobId(), 1, 2), () -> false, () -> ++clock[0]))
                    .run();
        }
    }

    /**
     * What worker 1 of 2 reads: {@code orders-1}, whose first 100 records have aged out, and
     * {@code payments-0}; both hold more than the golden batches covered.
     */
    private static InMemorySource source() {
        InMemorySource source = new InMemorySource().partition("orders", 1, 100).partition("payments", 0, 0);
        for (long offset = 100; offset < ORDERS_LATEST; offset++) {
            source.append("orders-1", offset, ORDERS_RECORD_MS, null, order(offset));
        }
        for (long offset = 0; offset < PAYMENTS_LATEST; offset++) {
            source.append("payments-0", offset, PAYMENTS_RECORD_MS + offset, null, payment(offset));
        }
        return source;
    }

    private static String order(long offset) {
        return "{\"id\": \"o" + offset % 7 + "\", \"status\": \"" + (offset % 4 == 0 ? "NEW" : "PAID") + "\", \"amount\": " + offset + "}";
    }

    private static String payment(long offset) {
        return "{\"id\": \"p" + offset % 3 + "\", \"status\": \"PAID\", \"amount\": " + offset + "}";
    }

    /** The rows of the records after the committed batch 0, applied in offset order per partition (their ids differ). */
    private static Map<String, Map<String, Object>> expectedRows() {
        return rowsOf(120, 80);
    }

    /** The rows of the records from {@code orders} of orders-1 and {@code payments} of payments-0 on, applied in offset order. */
    private static Map<String, Map<String, Object>> rowsOf(long orders, long payments) {
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (long offset = orders; offset < ORDERS_LATEST; offset++) {
            if (offset % 4 != 0) {
                rows.put("o" + offset % 7, Map.of("id", "o" + offset % 7, "amount", offset));
            }
        }
        for (long offset = payments; offset < PAYMENTS_LATEST; offset++) {
            rows.put("p" + offset % 3, Map.of("id", "p" + offset % 3, "amount", offset));
        }
        return rows;
    }
}
