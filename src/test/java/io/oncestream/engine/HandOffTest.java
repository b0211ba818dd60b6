package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointEpochs;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.kafka.PartitionAssignment;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.plan.Seed;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;

/**
 * The rescale hand-off of docs/protocol.md §11, run by the real engine in-process on an
 * in-memory Kafka and a last-write-wins table: n workers of epoch 0 run, stop at a barrier and
 * seal their checkpoints (one of them with an open batch left by a crash, which it replays
 * first); the savepoint made from the seals seeds m workers of epoch 1, which drain the rest.
 * The table must equal one in-order application of every record, every record must be written
 * with the timestamp an uninterrupted single worker gives it (invariants I3 and I10 across the
 * epochs), and each partition must be read by one worker per epoch, its ranges tiling it.
 */
class HandOffTest {

    private static final JobConfig JOB = JobConfigs.parse("""
            {
              "jobId": "test/rescale",
              "source": {"bootstrapServers": "unused:9092", "topics": ["orders"], "maxRecordsPerBatch": 7},
              "format": "json",
              "sink": {"contactPoints": ["unused:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "orders",
                       "columns": {"id": "value.id", "seq": "value.seq"}},
              "trigger": {"intervalMs": 0, "availableNow": true},
              "checkpoint": {"retainBatches": 2}
            }
            """);
    private static final RecordTransformer TRANSFORMER = RecordTransformer.compile(JOB);
    private static final List<String> TOPICS = List.of("orders");
    private static final int PARTITIONS = 3;
    private static final DurableFiles FILES = DurableFiles.failingAt((point, target) -> { });

    private static Map<String, Set<Long>> uninterrupted;
    private static Map<String, Map<String, Object>> expectedRows;

    @TempDir
    Path dir;

    @BeforeAll
    static void runOneWorkerWithoutARescale(@TempDir Path cleanDir) {
        Kafka kafka = new Kafka();
        kafka.produce(40);
        kafka.produce(40);
        kafka.produce(40);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        try (Checkpoint checkpoint = Checkpoint.open(cleanDir, metadata(1, 0), FILES)) {
            assertThat(engine(checkpoint, kafka.source, table, ProtocolHooks.NONE, Epoch.FIRST, 1, 0).run())
                    .isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        }
        uninterrupted = table.timestampsByRecord();
        expectedRows = table.rows();
        assertThat(expectedRows).as("keys repeat across partitions").hasSizeLessThan(30);
    }

    @ParameterizedTest(name = "{0} -> {1} workers")
    @CsvSource({"2, 3", "2, 1", "3, 2", "1, 3", "3, 1"})
    void aRescaleContinuesEveryChainWhereItsOldOwnerLeftIt(int from, int to) {
        Kafka kafka = new Kafka();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, from * 10 + to);
        kafka.produce(40);
        for (int i = 0; i < from; i++) {
            run(kafka, table, 0, from, i, null, () -> 0, ProtocolHooks.NONE);
        }
        // More records; worker 0 crashes in the middle of writing a batch: that batch is open.
        kafka.produce(40);
        assertThatThrownBy(() -> run(kafka, table, 0, from, 0, null, () -> 0, crashIn(ProtocolStep.MID_WRITE)))
                .isInstanceOf(Crash.class);
        int readsBefore = kafka.source.reads().size();

        // The barrier: worker 0 replays its open batch first, then every worker seals.
        List<CheckpointSeal> seals = new ArrayList<>();
        for (int i = 0; i < from; i++) {
            assertThat(run(kafka, table, 0, from, i, null, () -> 1, ProtocolHooks.NONE))
                    .isEqualTo(MicroBatchEngine.Outcome.AT_BARRIER);
            seals.add(Checkpoint.readSeal(volume(i)).orElseThrow());
        }
        assertThat(kafka.source.reads().size()).as("the open batch replayed before the seal, nothing else read")
                .isEqualTo(readsBefore + 1);
        // A sealed checkpoint is never planned again, even with records waiting.
        kafka.produce(40);
        int readsAtSeal = kafka.source.reads().size();
        for (int i = 0; i < from; i++) {
            assertThat(run(kafka, table, 0, from, i, null, () -> 0, ProtocolHooks.NONE))
                    .isEqualTo(MicroBatchEngine.Outcome.AT_BARRIER);
        }
        assertThat(kafka.source.reads()).hasSize(readsAtSeal);

        Savepoint savepoint = Savepoint.of(JOB.jobId(), 1, to, seals);
        assertThat(savepoint.partitions().keySet()).containsExactly("orders-0", "orders-1", "orders-2");
        for (int j = 0; j < to; j++) {
            assertThat(run(kafka, table, 1, to, j, savepoint, () -> 0, ProtocolHooks.NONE))
                    .isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        }

        assertThat(table.rows()).isEqualTo(expectedRows);
        assertThat(table.ties()).isEmpty();
        assertThat(table.timestampsByRecord()).as("each record written with the timestamp of the uninterrupted chain")
                .isEqualTo(uninterrupted);
        assertTiles(kafka.source.reads());
        assertThat(savepoint.totals().read()).as("the seals' counts: what epoch 0 committed").isBetween(40L, 79L);
        long readInEpoch1 = 0;
        for (int j = 0; j < to; j++) {
            try (Checkpoint checkpoint = Checkpoint.open(volume(j).resolve("epoch-1"), metadata(to, j), savepoint, FILES)) {
                readInEpoch1 += MicroBatchEngine.recoveredTotals(checkpoint, j == 0 ? savepoint.totals() : null).read();
            }
        }
        assertThat(readInEpoch1).as("the new workers' checkpoints count the job's records once: worker 0 carries on epoch 0's")
                .isEqualTo(120);
        for (int j = 0; j < to; j++) {
            assertThat(Files.exists(volume(j).resolve("epoch-1").resolve("savepoint"))).as("worker " + j + " keeps its savepoint")
                    .isTrue();
        }
    }

    /**
     * Two hand-offs in a row, the second before the new workers planned anything: each seals the
     * points it was seeded with, so no chain restarts (a seal of nothing would send its
     * partitions back to startingOffsets).
     */
    @Test
    void aWorkerSealedBeforeItsFirstBatchHandsOnItsSeed() {
        Kafka kafka = new Kafka();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 21);
        kafka.produce(80);
        List<CheckpointSeal> seals = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            run(kafka, table, 0, 2, i, null, () -> 0, ProtocolHooks.NONE);
            run(kafka, table, 0, 2, i, null, () -> 1, ProtocolHooks.NONE);
            seals.add(Checkpoint.readSeal(volume(i)).orElseThrow());
        }
        Savepoint first = Savepoint.of(JOB.jobId(), 1, 3, seals);
        kafka.produce(40);
        List<CheckpointSeal> again = new ArrayList<>();
        for (int j = 0; j < 3; j++) {
            assertThat(run(kafka, table, 1, 3, j, first, () -> 2, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.AT_BARRIER);
            again.add(Checkpoint.readSeal(volume(j).resolve("epoch-1")).orElseThrow());
        }
        assertThat(again).allSatisfy(seal -> assertThat(seal.batchId()).isEqualTo(-1));
        Savepoint second = Savepoint.of(JOB.jobId(), 2, 2, again);
        assertThat(second.partitions()).as("the seeds handed on").isEqualTo(first.partitions());
        for (int j = 0; j < 2; j++) {
            run(kafka, table, 2, 2, j, second, () -> 0, ProtocolHooks.NONE);
        }
        assertThat(table.rows()).isEqualTo(expectedRows);
        assertThat(table.timestampsByRecord()).isEqualTo(uninterrupted);
    }

    @Test
    void aNewOwnerThatRestartsTheChainIsCaught() {
        Kafka kafka = new Kafka();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 7);
        kafka.produce(80);
        for (int i = 0; i < 2; i++) {
            run(kafka, table, 0, 2, i, null, () -> 0, ProtocolHooks.NONE);
            run(kafka, table, 0, 2, i, null, () -> 1, ProtocolHooks.NONE);
        }
        Savepoint right = Savepoint.of(JOB.jobId(), 1, 3, List.of(Checkpoint.readSeal(volume(0)).orElseThrow(),
                Checkpoint.readSeal(volume(1)).orElseThrow()));
        Map<String, ChainPoint> restarted = new TreeMap<>();
        right.partitions().forEach((p, point) -> restarted.put(p, new ChainPoint(point.offset(), 0)));
        Savepoint wrong = new Savepoint(right.jobId(), 1, 2, 3, restarted, right.lastBatches());
        kafka.produce(40);
        for (int j = 0; j < 3; j++) {
            run(kafka, table, 1, 3, j, wrong, () -> 0, ProtocolHooks.NONE);
        }
        assertThat(table.timestampsByRecord()).as("the check above catches a chain restarted at 0").isNotEqualTo(uninterrupted);
    }

    /**
     * A checkpoint volume lost after its records aged out of Kafka: from a fresh volume, the
     * worker goes on from the chain points this job committed to its consumer group, recorded
     * in the new checkpoint before its first batch, and every record after them gets the
     * timestamp of the uninterrupted chain. Without them (a group that does not carry the job)
     * the same fresh volume finds its first offsets gone and stops.
     */
    @Test
    void aLostVolumeGoesOnFromTheConsumerGroupsChainPoints() {
        Kafka kafka = new Kafka();
        kafka.source.groupCarriesTheJob();
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 11);
        kafka.produce(80);
        run(kafka, table, 0, 1, 0, null, () -> 0, ProtocolHooks.NONE);
        Map<String, Long> group = new TreeMap<>(kafka.source.groupOffsets());
        kafka.produce(40);
        group.forEach((p, offset) -> kafka.source.ageOut(p, offset));
        deleteRecursively(volume(0));

        assertThat(run(kafka, table, 0, 1, 0, null, () -> 0, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        try (Checkpoint checkpoint = Checkpoint.open(volume(0), metadata(1, 0), FILES)) {
            assertThat(checkpoint.recovered()).as("the chain points recovered, in the checkpoint").isPresent();
            assertThat(checkpoint.recovered().get().partitions()).extractingFromEntries(e -> e.getKey() + "@" + e.getValue().offset())
                    .containsExactlyInAnyOrderElementsOf(group.entrySet().stream().map(e -> e.getKey() + "@" + e.getValue()).toList());
        }
        assertThat(table.rows()).isEqualTo(expectedRows);
        assertThat(table.timestampsByRecord()).as("each record written with the timestamp of the uninterrupted chain")
                .isEqualTo(uninterrupted);

        // The same loss without the group's chain points: the new checkpoint starts at the earliest
        // offset Kafka still has with a chain restarted at 0, and the records get other timestamps.
        Kafka plain = new Kafka();
        plain.produce(80);
        LastWriteWinsSink other = new LastWriteWinsSink("id", 3, 12);
        run(plain, other, 0, 1, 0, null, () -> 0, ProtocolHooks.NONE, dir.resolve("plain"));
        plain.produce(40);
        new TreeMap<>(plain.source.groupOffsets()).forEach((p, offset) -> plain.source.ageOut(p, offset));
        deleteRecursively(dir.resolve("plain"));
        run(plain, other, 0, 1, 0, null, () -> 0, ProtocolHooks.NONE, dir.resolve("plain"));
        assertThat(other.timestampsByRecord()).as("the check above catches a chain restarted after a lost volume")
                .isNotEqualTo(uninterrupted);
    }

    private static void deleteRecursively(Path path) {
        try (var all = Files.walk(path)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aWorkerWhoseOldOwnerCommittedNothingStartsByStartingOffsets() {
        Savepoint savepoint = new Savepoint(JOB.jobId(), 1, 2, 1, Map.of("orders-0", new ChainPoint(5, 9)), List.of(4L, -1L));
        Seed seed = new PartitionAssignment(TOPICS, 1, 0).seed(savepoint);
        assertThat(seed.partitions()).containsOnlyKeys("orders-0");
        assertThat(seed.startsFromStartingOffsets()).accepts("orders-1").rejects("orders-2");
    }

    @Test
    void aWorkerConfiguredForAnOlderEpochThanItsVolumeRefusesToStart() throws Exception {
        Path volume = volume(0);
        Files.createDirectories(volume.resolve("epoch-2"));
        Files.writeString(volume.resolve("epoch-2").resolve("metadata"), "v1\n{}\n");
        assertThatThrownBy(() -> CheckpointEpochs.check(volume, 1)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining("epoch-2").hasMessageContaining("configured for epoch 1");
    }

    @Test
    void aNewEpochIsRefusedOverAnUnsealedOlderOne() {
        Kafka kafka = new Kafka();
        kafka.produce(20);
        run(kafka, new LastWriteWinsSink("id", 3, 1), 0, 1, 0, null, () -> 0, ProtocolHooks.NONE);
        assertThatThrownBy(() -> CheckpointEpochs.check(volume(0), 1)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining(volume(0).resolve("sealed").toString())
                .hasMessageContaining("was not sealed at a barrier");
    }

    @Test
    void aCheckpointSeededFromOneSavepointRefusesAnother() {
        Savepoint first = new Savepoint(JOB.jobId(), 1, 1, 1, Map.of("orders-0", new ChainPoint(5, 9)), List.of(4L));
        Savepoint other = new Savepoint(JOB.jobId(), 1, 1, 1, Map.of("orders-0", new ChainPoint(6, 9)), List.of(5L));
        Path epoch = volume(0).resolve("epoch-1");
        Checkpoint.open(epoch, metadata(1, 0), first, FILES).close();
        Checkpoint.open(epoch, metadata(1, 0), first, FILES).close();
        assertThatThrownBy(() -> Checkpoint.open(epoch, metadata(1, 0), other, FILES)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining(epoch.resolve("savepoint").toString()).hasMessageContaining("another savepoint");
    }

    @Test
    void sealsThatShareAPartitionMakeNoSavepoint() {
        CheckpointSeal a = new CheckpointSeal(1, 3, Map.of("orders-0", new ChainPoint(5, 9)), 0);
        CheckpointSeal b = new CheckpointSeal(1, 4, Map.of("orders-0", new ChainPoint(7, 12)), 0);
        assertThatThrownBy(() -> Savepoint.of(JOB.jobId(), 1, 2, List.of(a, b))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("orders-0 is in the seals of two workers");
        CheckpointSeal old = new CheckpointSeal(2, 4, Map.of("orders-1", new ChainPoint(7, 12)), 0);
        assertThatThrownBy(() -> Savepoint.of(JOB.jobId(), 1, 2, List.of(a, old))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("worker 1 sealed for epoch 2, not 1");
    }

    /** Every partition's reads, in order, tile it: each starts where the one before ended, or repeats it (a replay). */
    private static void assertTiles(List<Map<String, PartitionRange>> reads) {
        Map<String, PartitionRange> last = new TreeMap<>();
        for (Map<String, PartitionRange> read : reads) {
            read.forEach((p, r) -> {
                PartitionRange before = last.get(p);
                if (before != null && !before.equals(r)) {
                    assertThat(r.start()).as(p + ": " + r + " after " + before).isEqualTo(before.end());
                    assertThat(r.timestampBase()).as(p + " base").isGreaterThanOrEqualTo(before.timestampBase());
                }
                last.put(p, r);
            });
        }
    }

    private MicroBatchEngine.Outcome run(Kafka kafka, LastWriteWinsSink table, int epochNumber, int parallelism, int index,
            Savepoint savepoint, java.util.function.IntSupplier barrier, ProtocolHooks hooks) {
        return run(kafka, table, epochNumber, parallelism, index, savepoint, barrier, hooks, volume(index));
    }

    private MicroBatchEngine.Outcome run(Kafka kafka, LastWriteWinsSink table, int epochNumber, int parallelism, int index,
            Savepoint savepoint, java.util.function.IntSupplier barrier, ProtocolHooks hooks, Path volume) {
        PartitionAssignment assignment = new PartitionAssignment(TOPICS, parallelism, index);
        Path checkpointDir = CheckpointEpochs.check(volume, epochNumber);
        Epoch epoch = new Epoch(epochNumber, savepoint == null ? null : assignment.seed(savepoint), barrier,
                savepoint == null || index != 0 ? null : savepoint.totals());
        try (Checkpoint checkpoint = Checkpoint.open(checkpointDir, metadata(parallelism, index), savepoint, FILES)) {
            return engine(checkpoint, new Owned(kafka.source, assignment), table, hooks, epoch, parallelism, index).run();
        }
    }

    private static MicroBatchEngine engine(Checkpoint checkpoint, RecordSource source, LastWriteWinsSink table,
            ProtocolHooks hooks, Epoch epoch, int parallelism, int index) {
        return new MicroBatchEngine(JOB, checkpoint, new Pipeline(source, TRANSFORMER, table),
                new Controls(hooks, new ProgressTracker(JOB.jobId(), index, parallelism), () -> false,
                        new AtomicLong()::incrementAndGet), epoch);
    }

    private Path volume(int index) {
        return dir.resolve("volume-" + index);
    }

    private static CheckpointMetadata metadata(int parallelism, int index) {
        return new CheckpointMetadata(CheckpointMetadata.FORMAT, JOB.jobId(), TOPICS, parallelism, index);
    }

    private static ProtocolHooks crashIn(ProtocolStep at) {
        return (step, batch) -> {
            if (step == at) {
                throw new Crash();
            }
        };
    }

    private static final class Crash extends RuntimeException {
    }

    /** The partitions of the topic a worker owns, as its consumer sees them. */
    private record Owned(InMemorySource all, PartitionAssignment assignment) implements RecordSource {
        @Override
        public Map<String, KafkaOffsets> offsets() {
            return owned(all.offsets());
        }

        /** The entries of {@code byPartition} of the partitions this worker owns. */
        private <T> Map<String, T> owned(Map<String, T> byPartition) {
            Map<String, T> owned = new TreeMap<>();
            byPartition.forEach((p, value) -> {
                if (assignment.owns("orders", Integer.parseInt(p.substring(p.lastIndexOf('-') + 1)))) {
                    owned.put(p, value);
                }
            });
            return owned;
        }

        @Override
        public void read(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler) {
            all.read(ranges, handler);
        }

        @Override
        public void commitGroupOffsets(Map<String, ChainPoint> points) {
            all.commitGroupOffsets(points);
        }

        @Override
        public Map<String, ChainPoint> committedChainPoints() {
            return owned(all.committedChainPoints());
        }

        @Override
        public void close() {
        }
    }

    /**
     * Three partitions with keys that collide within and across them: partition 0's records all
     * carry the same timestamp (its order is the chain's +1 alone), partition 1's increase,
     * partition 2's go backwards.
     */
    private static final class Kafka {
        final InMemorySource source = new InMemorySource().partition("orders", 0, 0).partition("orders", 1, 0)
                .partition("orders", 2, 0);
        private final Random random = new Random(5);
        private final long[] next = new long[PARTITIONS];
        private long seq;

        void produce(int count) {
            for (int i = 0; i < count; i++) {
                int p = random.nextInt(PARTITIONS);
                long s = seq++;
                String id = "k" + random.nextInt(8);
                long timestamp = switch (p) {
                    case 0 -> 1_700_000_000_000L;
                    case 1 -> 1_700_000_000_000L + s;
                    default -> 1_700_000_100_000L - s;
                };
                source.append("orders-" + p, next[p]++, timestamp, id, "{\"id\": \"" + id + "\", \"seq\": " + s + "}");
            }
        }
    }

}
