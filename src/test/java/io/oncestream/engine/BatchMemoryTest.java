package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

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
        InMemorySource source = new InMemorySource().partition("orders", 0, 0).partition("orders", 1, 0);
        int records = 600;
        long recordBytes = 0;
        for (int i = 0; i < records; i++) {
            String key = "k%03d".formatted(i);
            String value = "{\"id\": \"" + key + "\", \"amount\": " + i + ", \"pad\": \"" + "x".repeat(400 - String.valueOf(i).length()) + "\"}";
            recordBytes = key.length() + value.length(); // the same for every record
            source.append("orders-" + (i % 2), i / 2, 1000 + i, key, value);
        }
        // A heap whose eighth fits 50 records of the 1 KiB assumed before the first batch.
        long heap = 8L * 50 * (BatchMemory.PER_RECORD + BatchMemory.PER_BYTE * BatchMemory.ASSUMED_RECORD_BYTES);
        long fits = heap / 8 / (BatchMemory.PER_RECORD + BatchMemory.PER_BYTE * recordBytes);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        JobConfig job = JobConfigs.parse("""
                {"jobId": "t/memory", "source": {"bootstrapServers": "k:9092", "topics": ["orders"], "maxRecordsPerBatch": 1000},
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "value.id", "amount": "value.amount"}},
                 "trigger": {"intervalMs": 0, "availableNow": true}}
                """);
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, job.jobId(), job.source().topics(), 1, 0);
        try (Checkpoint checkpoint = Checkpoint.open(dir, metadata, DurableFiles.failingAt((point, target) -> { }))) {
            new MicroBatchEngine(job, checkpoint, new Pipeline(source, RecordTransformer.compile(job), table),
                    new Controls(ProtocolHooks.NONE, new ProgressTracker(job.jobId(), 0, 1), () -> false, new AtomicLong()::incrementAndGet))
                    .heapForBatches(heap).run();
        }

        List<Long> sizes = source.reads().stream().map(BatchMemoryTest::size).toList();
        assertThat(sizes.get(0)).as("the first batch, records of 1 KiB assumed").isEqualTo(50);
        assertThat(sizes.subList(1, sizes.size() - 1)).as("then what fits records of " + recordBytes + " bytes")
                .isNotEmpty().allSatisfy(size -> assertThat(size).isEqualTo(fits));
        assertThat(sizes.stream().mapToLong(Long::longValue).sum()).isEqualTo(records);
        assertThat(table.rows()).hasSize(records);
        for (int i = 0; i < records; i++) {
            assertThat(table.rows().get("k%03d".formatted(i))).containsEntry("amount", (long) i);
        }
        assertThat(table.ties()).isEmpty();
    }

    private static long size(Map<String, PartitionRange> read) {
        return read.values().stream().mapToLong(r -> r.end() - r.start()).sum();
    }
}
