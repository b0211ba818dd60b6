package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * A new batch holds no more records than an eighth of the heap fits, estimated from the last
 * batch's records; {@code maxRecordsPerBatch} still caps it, and a small heap never stops a job.
 */
class BatchMemoryTest {

    private static final long MIB = 1024 * 1024;

    @TempDir
    Path dir;

    @Test
    void aLargeHeapLeavesMaxRecordsPerBatchAsItIs() {
        BatchMemory memory = new BatchMemory(4096 * MIB);
        assertThat(memory.maxRecords(50_000)).isEqualTo(50_000);
        memory.read(10_000, 10_000 * 150L);
        assertThat(memory.maxRecords(50_000)).isEqualTo(50_000);
    }

    @Test
    void aSmallHeapCapsBatchesByTheLastBatchsRecordSize() {
        BatchMemory memory = new BatchMemory(96 * MIB); // a 256 MiB pod's heap
        long budget = 12 * MIB;
        assertThat(memory.maxRecords(50_000)).as("before any batch: records of 1 KiB assumed").isEqualTo(budget / (1024 + 3 * 1024));
        memory.read(3_000, 3_000 * 150L);
        assertThat(memory.bytesPerRecord()).isEqualTo(150);
        assertThat(memory.maxRecords(50_000)).isEqualTo(budget / (1024 + 3 * 150)).isEqualTo(8_536);
        memory.read(0, 0);
        assertThat(memory.maxRecords(50_000)).as("an empty batch says nothing of record sizes").isEqualTo(8_536);
        assertThat(memory.maxRecords(1_000)).as("maxRecordsPerBatch still caps").isEqualTo(1_000);
        memory.read(10, 10 * 20 * MIB);
        assertThat(memory.maxRecords(50_000)).as("records larger than the budget: one at a time").isEqualTo(1);
    }

    @Test
    void theEngineReadsABacklogInBatchesThatFitTheHeapAndLosesNothing() {
        InMemorySource source = backlog();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        run(source, table, SMALL_HEAP, ProtocolHooks.NONE);

        List<Long> sizes = source.reads().stream().map(BatchMemoryTest::size).toList();
        assertThat(sizes.get(0)).as("the first batch, records of 1 KiB assumed").isEqualTo(50);
        long fits = SMALL_HEAP / 8 / (BatchMemory.PER_RECORD + BatchMemory.PER_BYTE * BACKLOG_RECORD_BYTES);
        assertThat(sizes.subList(1, sizes.size() - 1)).as("then what fits records of " + BACKLOG_RECORD_BYTES + " bytes")
                .isNotEmpty().allSatisfy(size -> assertThat(size).isEqualTo(fits));
        assertThat(sizes.stream().mapToLong(Long::longValue).sum()).isEqualTo(BACKLOG);
        assertExact(table);
    }

    /** A batch planned to fit a small heap is replayed as its write-ahead entry says, whatever the heap after the restart. */
    @Test
    void aCrashedBatchIsReplayedWithItsRecordedRangesWhateverTheHeapNow() {
        InMemorySource source = backlog();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        assertThatThrownBy(() -> run(source, table, SMALL_HEAP, (step, batchId) -> {
            if (step == ProtocolStep.MID_READ && batchId == 1) {
                throw new IllegalStateException("crash in the middle of batch 1's read");
            }
        })).hasMessageContaining("crash in the middle");
        Map<String, PartitionRange> crashed = source.reads().get(1);
        assertThat(size(crashed)).as("a batch cut to the small heap").isLessThan(BACKLOG - 50);

        run(source, table, 4096L << 20, ProtocolHooks.NONE);
        assertThat(source.reads().get(2)).as("the replay, with a heap that fits every record").isEqualTo(crashed);
        assertThat(size(source.reads().get(3))).as("then one batch of all the rest").isEqualTo(BACKLOG - 50 - size(crashed));
        assertExact(table);
        assertThat(table.ties()).isEmpty();
    }

    /**
     * Records of 8 KiB, where the first batch is planned for records of 1 KiB: the batch holds
     * eight times what its plan fits, but its writes, like every batch's, are flushed each time
     * they reach a 32nd of the heap, while it is read: halfway through the read, rows are in the
     * table. A crash there, between flushes, is replayed, and the table is exact, every record
     * written with one timestamp; the next batches, planned from the records measured, fit the
     * heap again.
     */
    @Test
    void aBatchsWritesAreFlushedWhileItIsReadEvenIfItIsFarLargerThanItsPlan() {
        InMemorySource source = new InMemorySource().partition("orders", 0, 0);
        for (int i = 0; i < 60; i++) {
            source.append("orders-0", i, 1000 + i, "k%03d".formatted(i), paddedValue("k%03d".formatted(i), i, 8192));
        }
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        List<Integer> rowsAtMidRead = new java.util.ArrayList<>();
        assertThatThrownBy(() -> run(source, table, SMALL_HEAP, (step, batchId) -> {
            if (step == ProtocolStep.MID_READ && batchId == 0) {
                rowsAtMidRead.add(table.rows().size());
                throw new IllegalStateException("crash at MID_READ of batch 0");
            }
        })).hasMessageContaining("crash at MID_READ");
        long perFlush = recordsToReach(SMALL_HEAP / 32, BatchMemory.recordBytes(8192));
        assertThat(perFlush).isEqualTo(2);
        assertThat(rowsAtMidRead).as("rows written halfway through the read of 25 records: 12 flushes of 2").containsExactly(24);

        run(source, table, SMALL_HEAP, ProtocolHooks.NONE);
        assertThat(source.reads().stream().map(BatchMemoryTest::size).toList())
                .as("a first batch planned for 1 KiB records, crashed and replayed, then batches planned for 8 KiB ones")
                .containsExactly(50L, 50L, 8L, 2L);
        assertThat(table.sends()).as("every batch's writes flushed a 32nd of the heap at a time").hasSize(12 + 30).containsOnly(2);
        assertThat(table.rows()).hasSize(60);
        for (int i = 0; i < 60; i++) {
            assertThat(table.rows().get("k%03d".formatted(i))).containsEntry("amount", (long) i);
        }
        assertThat(table.ties()).isEmpty();
        assertThat(table.timestampsByRecord().values()).allSatisfy(ts -> assertThat(ts).hasSize(1));
    }

    /**
     * A batch planned under a large heap is replayed, after a restart with a small one, with its
     * recorded 600 records, which the small heap could not hold at once: they are flushed while
     * read. The protocol's MID_WRITE point comes once half of the writes are acknowledged, during
     * the read; a crash there is replayed again, and the table is exact, every record with one
     * timestamp.
     */
    @Test
    void aReplayLargerThanTheHeapNowIsFlushedWhileReadAndSurvivesACrashInTheMiddleOfItsWrites() {
        InMemorySource source = backlog();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        assertThatThrownBy(() -> run(source, table, 4096L << 20, crashAt(ProtocolStep.MID_READ, 0)))
                .hasMessageContaining("crash at MID_READ");
        assertThat(size(source.reads().get(0))).as("one batch of the whole backlog, planned under 4 GiB").isEqualTo(BACKLOG);
        assertThat(table.sends()).as("under 4 GiB nothing is flushed before the read's middle").isEmpty();

        assertThatThrownBy(() -> run(source, table, SMALL_HEAP, crashAt(ProtocolStep.MID_WRITE, 0)))
                .hasMessageContaining("crash at MID_WRITE");
        long perFlush = recordsToReach(SMALL_HEAP / 32, BatchMemory.recordBytes(BACKLOG_RECORD_BYTES));
        assertThat(perFlush).isEqualTo(22);
        assertThat(table.sends()).as("the replay's flushes until half of its 600 writes were acknowledged").hasSize(14).containsOnly(22);
        assertThat(table.rows()).as("the crash came after some writes and before others").hasSize(300);

        run(source, table, SMALL_HEAP, ProtocolHooks.NONE);
        assertThat(source.reads().subList(1, source.reads().size())).as("each replay read the recorded ranges")
                .containsOnly(source.reads().get(0));
        assertExact(table);
        assertThat(table.ties()).isEmpty();
        assertThat(table.timestampsByRecord().values()).allSatisfy(ts -> assertThat(ts).hasSize(1));
    }

    /** How many records of {@code recordBytes} it takes to reach {@code limit}: the records of a flush. */
    private static long recordsToReach(long limit, long recordBytes) {
        return (limit + recordBytes - 1) / recordBytes;
    }

    private static ProtocolHooks crashAt(ProtocolStep crashStep, long crashBatch) {
        return (step, batchId) -> {
            if (step == crashStep && batchId == crashBatch) {
                throw new IllegalStateException("crash at " + step + " of batch " + batchId);
            }
        };
    }

    /** A JSON value with {@code id} and {@code amount}, padded so that key and value take {@code bytes}. */
    private static String paddedValue(String key, int amount, int bytes) {
        String head = "{\"id\": \"" + key + "\", \"amount\": " + amount + ", \"pad\": \"";
        String value = head + "x".repeat(bytes - key.length() - head.length() - 2) + "\"}";
        assertThat(key.length() + value.length()).isEqualTo(bytes);
        return value;
    }

    private static final int BACKLOG = 600;
    /** Each backlog record's key and value, in bytes. */
    private static final long BACKLOG_RECORD_BYTES = 441;
    /** A heap whose eighth fits 50 records of the 1 KiB assumed before the first batch. */
    private static final long SMALL_HEAP = 8L * 50 * (BatchMemory.PER_RECORD + BatchMemory.PER_BYTE * BatchMemory.ASSUMED_RECORD_BYTES);

    /** {@link #BACKLOG} records over two partitions, each of {@link #BACKLOG_RECORD_BYTES}. */
    private static InMemorySource backlog() {
        InMemorySource source = new InMemorySource().partition("orders", 0, 0).partition("orders", 1, 0);
        for (int i = 0; i < BACKLOG; i++) {
            String key = "k%03d".formatted(i);
            String value = "{\"id\": \"" + key + "\", \"amount\": " + i + ", \"pad\": \"" + "x".repeat(400 - String.valueOf(i).length()) + "\"}";
            assertThat(key.length() + value.length()).isEqualTo(BACKLOG_RECORD_BYTES);
            source.append("orders-" + (i % 2), i / 2, 1000 + i, key, value);
        }
        return source;
    }

    /** An availableNow job over {@code source} with batches sized for {@code heap}, on this test's checkpoint. */
    private void run(InMemorySource source, LastWriteWinsSink table, long heap, ProtocolHooks hooks) {
        JobConfig job = JobConfigs.parse("""
                {"jobId": "t/memory", "source": {"bootstrapServers": "k:9092", "topics": ["orders"], "maxRecordsPerBatch": 1000},
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "value.id", "amount": "value.amount"}},
                 "trigger": {"intervalMs": 0, "availableNow": true}}
                """);
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, job.jobId(), job.source().topics(), 1, 0);
        try (Checkpoint checkpoint = Checkpoint.open(dir, metadata, DurableFiles.failingAt((point, target) -> { }))) {
            new MicroBatchEngine(job, checkpoint, new Pipeline(source, RecordTransformer.compile(job), table),
                    new Controls(hooks, new ProgressTracker(job.jobId(), 0, 1), () -> false, new AtomicLong()::incrementAndGet))
                    .heapForBatches(heap).run();
        }
    }

    private static void assertExact(LastWriteWinsSink table) {
        assertThat(table.rows()).hasSize(BACKLOG);
        for (int i = 0; i < BACKLOG; i++) {
            assertThat(table.rows().get("k%03d".formatted(i))).containsEntry("amount", (long) i);
        }
    }

    /**
     * A continuous job whose interval never ends (its clock stands still): the parts of the first
     * interval run back to back, the last one cut to what maxRecordsPerBatch leaves, and then the
     * engine waits for the next interval, having read the interval's share and no more.
     */
    @Test
    void batchesCutShortByTheHeapRunBackToBackUntilTheIntervalReadMaxRecordsPerBatch() throws Exception {
        InMemorySource source = new InMemorySource().partition("orders", 0, 0);
        for (int i = 0; i < 300; i++) {
            String key = "k%03d".formatted(i);
            String value = "{\"id\": \"" + key + "\", \"amount\": 1, \"pad\": \"";
            value += "x".repeat((int) BatchMemory.ASSUMED_RECORD_BYTES - key.length() - value.length() - 2) + "\"}";
            source.append("orders-0", i, 1000 + i, key, value); // key and value: the 1 KiB assumed, so every batch fits 50
        }
        long heap = 8L * 50 * (BatchMemory.PER_RECORD + BatchMemory.PER_BYTE * BatchMemory.ASSUMED_RECORD_BYTES);
        JobConfig job = JobConfigs.parse("""
                {"jobId": "t/parts", "source": {"bootstrapServers": "k:9092", "topics": ["orders"], "maxRecordsPerBatch": 120},
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "value.id", "amount": "value.amount"}},
                 "trigger": {"intervalMs": 60000, "availableNow": false}}
                """);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        ProgressTracker progress = new ProgressTracker(job.jobId(), 0, 1);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, job.jobId(), job.source().topics(), 1, 0);
        try (Checkpoint checkpoint = Checkpoint.open(dir, metadata, DurableFiles.failingAt((point, target) -> { }))) {
            MicroBatchEngine engine = new MicroBatchEngine(job, checkpoint, new Pipeline(source, RecordTransformer.compile(job), table),
                    new Controls(ProtocolHooks.NONE, progress, stop::get, () -> 0L)).heapForBatches(heap);
            java.util.concurrent.CompletableFuture<MicroBatchEngine.Outcome> outcome =
                    java.util.concurrent.CompletableFuture.supplyAsync(engine::run);
            io.oncestream.testing.Awaits.until(java.time.Duration.ofSeconds(60), "the engine to wait for its next interval",
                    () -> progress.state() == io.oncestream.contract.EngineState.IDLE || outcome.isDone());
            assertThat(source.reads().stream().map(BatchMemoryTest::size).toList())
                    .as("the first interval's parts: 50 fit the heap, and maxRecordsPerBatch leaves 20 for the third").containsExactly(50L, 50L, 20L);
            stop.set(true);
            assertThat(outcome.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(MicroBatchEngine.Outcome.STOPPED);
        }
        assertThat(table.rows()).hasSize(120);
    }

    private static long size(Map<String, PartitionRange> read) {
        return read.values().stream().mapToLong(r -> r.end() - r.start()).sum();
    }
}
