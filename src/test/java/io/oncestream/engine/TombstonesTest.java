package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * Records with a null value (Kafka tombstones) under each {@code tombstones} mode, through the
 * real engine with an in-memory Kafka and a last-write-wins table: ignored and counted; a
 * delete of the row the key maps to, which a later upsert of the key overrides and a replay
 * leaves as it is; or a bad record. The filter does not see them.
 */
class TombstonesTest {

    @TempDir
    Path dir;

    @Test
    void ignoredTombstonesWriteNothingAndAreCounted() {
        LastWriteWinsSink table = run("ignore", null);
        assertThat(table.rows()).containsOnlyKeys("a", "b", "c");
        assertThat(table.deadLetters()).isEmpty();
    }

    @Test
    void deletedTombstonesRemoveTheRowUnlessTheKeyIsWrittenAgainLater() {
        LastWriteWinsSink table = run("delete", null);
        assertThat(table.rows()).as("a deleted; b deleted, then written again; c never deleted").containsOnlyKeys("b", "c");
        assertThat(table.rows().get("b")).containsEntry("amount", 3L);
        assertThat(table.deadLetters()).isEmpty();
    }

    @Test
    void aReplayOfDeletesLeavesTheSameTable() {
        LastWriteWinsSink crashed = new LastWriteWinsSink("id", 1, 3);
        assertThatThrownBy(() -> run("delete", crashed, (step, batchId) -> {
            if (step == ProtocolStep.MID_WRITE) {
                throw new IllegalStateException("crash in the middle of the writes");
            }
        })).hasMessage("crash in the middle of the writes");
        run("delete", crashed, ProtocolHooks.NONE);
        assertThat(crashed.rows()).isEqualTo(run("delete", null).rows());
        assertThat(crashed.ties()).isEmpty();
    }

    @Test
    void deadLetteredTombstonesAreBadRecords() {
        LastWriteWinsSink table = run("deadLetter", null);
        assertThat(table.rows()).containsOnlyKeys("a", "b", "c");
        assertThat(table.deadLetters()).containsOnlyKeys("orders-0@2", "orders-0@3");
        assertThat(table.deadLetters().values()).allSatisfy(e -> assertThat(e.toString()).contains("tombstone"));
    }

    @Test
    void aKeyColumnThatNeedsTheValueMakesTheTombstoneABadRecord() {
        LastWriteWinsSink table = new LastWriteWinsSink("id", 1, 1);
        run(config("delete", "value.id"), table, ProtocolHooks.NONE, dir.resolve("value-key"));
        assertThat(table.deadLetters()).hasSize(2);
        assertThat(table.deadLetters().values()).allSatisfy(e -> assertThat(e.toString()).startsWith("sink.columns.id"));
    }

    private LastWriteWinsSink run(String mode, LastWriteWinsSink existing) {
        LastWriteWinsSink table = existing != null ? existing : new LastWriteWinsSink("id", 1, 1);
        run(config(mode, "key"), table, ProtocolHooks.NONE, dir.resolve(mode + "-" + System.nanoTime()));
        return table;
    }

    private void run(String mode, LastWriteWinsSink table, ProtocolHooks hooks) {
        run(config(mode, "key"), table, hooks, dir.resolve("replay"));
    }

    private static void run(JobConfig job, LastWriteWinsSink table, ProtocolHooks hooks, Path checkpointDir) {
        InMemorySource source = new InMemorySource().partition("orders", 0, 0);
        source.append("orders-0", 0, 1000, "a", "{\"id\": \"a\", \"amount\": 1, \"status\": \"PAID\"}");
        source.append("orders-0", 1, 1001, "b", "{\"id\": \"b\", \"amount\": 2, \"status\": \"PAID\"}");
        source.append("orders-0", 2, 1002, "a", null);
        source.append("orders-0", 3, 1003, "b", null);
        source.append("orders-0", 4, 1004, "b", "{\"id\": \"b\", \"amount\": 3, \"status\": \"PAID\"}");
        source.append("orders-0", 5, 1005, "c", "{\"id\": \"c\", \"amount\": 4, \"status\": \"PAID\"}");
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, job.jobId(), job.source().topics(), 1, 0);
        ProgressTracker progress = new ProgressTracker(job.jobId(), 0, 1);
        try (Checkpoint checkpoint = Checkpoint.open(checkpointDir, metadata, DurableFiles.failingAt((point, target) -> { }))) {
            new MicroBatchEngine(job, checkpoint, new Pipeline(source, RecordTransformer.compile(job), table),
                    new Controls(hooks, progress, () -> false, new AtomicLong()::incrementAndGet)).run();
        }
        if (job.tombstones() == io.oncestream.contract.TombstoneMode.IGNORE) {
            assertThat(progress.snapshot().totals().filteredOut()).as("ignored tombstones are counted").isEqualTo(2);
        }
    }

    private static JobConfig config(String mode, String idExpression) {
        return JobConfigs.parse("""
                {"jobId": "t/tombstones", "source": {"bootstrapServers": "k:9092", "topics": ["orders"], "maxRecordsPerBatch": 3},
                 "filter": "value.status == 'PAID'",
                 "tombstones": "%s",
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "%s", "amount": "value.amount"}},
                 "deadLetter": {"mode": "table", "table": "t_dead_letters"},
                 "trigger": {"intervalMs": 0, "availableNow": true}}
                """.formatted(mode, idExpression));
    }
}
