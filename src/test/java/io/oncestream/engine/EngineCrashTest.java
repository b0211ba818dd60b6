package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.oncestream.contract.ChainPoint;
import io.oncestream.engine.checkpoint.AppendBatchLog;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.checkpoint.DurableFiles.AppendPoint;
import io.oncestream.engine.checkpoint.DurableFiles.WritePoint;
import io.oncestream.engine.checkpoint.LogFiles;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * Exactly-once across a crash at every point of the batch protocol, in process: the engine
 * runs an {@code availableNow} job over a few batches from an {@link InMemorySource} into a
 * {@link LastWriteWinsSink}, is crashed in batch k, and a fresh engine on the same checkpoint
 * directory runs the job to completion. The crash points are every {@link ProtocolStep} and,
 * while {@code offsets/k}, {@code commits/k} or {@code metadata} is written, every
 * {@link WritePoint} of {@link DurableFiles}. Then:
 * <ul>
 * <li>the table equals the expectation computed here from the produced records alone: each
 *     record applied once in the order produced, the last write of a key winning, bad records
 *     in the dead-letter table;</li>
 * <li>every batch is committed, to the source's latest offsets, and no temp file is left;</li>
 * <li>an open batch is replayed with exactly the ranges (and timestamp bases) its
 *     {@code offsets/k} recorded, though the source received more records meanwhile, and
 *     every record is written, each time, with the timestamp a run without a crash gives it;</li>
 * <li>the consumer-group offsets the source receives never pass the ends of the commit log on
 *     disk at that moment, and end at the latest offsets.</li>
 * </ul>
 *
 * <p>What is simulated: a process crash leaves the files as they are (the page cache keeps
 * everything written, fsync'd or not) and releases the lock; the sink keeps what it
 * acknowledged and also some unacknowledged writes of the batch; the source keeps its records
 * and group offsets. A crash right before the directory fsync ({@link WritePoint#TEMP_REMOVED})
 * is also run as a power loss there, in its worst case: the just-linked name is gone. Not
 * simulated: a power loss undoing the unsynced deletions of purged old batches (they are
 * committed batches below the latest, which the planner ignores), a power loss at
 * {@link WritePoint#LINKED} (worst case: the state of a crash at {@link WritePoint#TEMP_SYNCED},
 * which is run), and torn writes of fsync'd files.
 *
 * <p>The data makes mistakes visible: keys repeat within and across partitions and batches;
 * the orders partitions carry increasing record timestamps, so a later record of another
 * partition must win; the payments partition carries one old timestamp for all, so its write
 * timestamps come from the chain of the {@code timestampBase}s and a replay with another base
 * loses to writes of earlier batches; offsets have gaps, one partition starts above 0 and
 * one ends with a gap.
 */
class EngineCrashTest {

    private static final JobConfig JOB = JobConfigs.parse("""
            {
              "jobId": "test/crash",
              "source": {"bootstrapServers": "unused:9092", "topics": ["orders", "payments"], "maxRecordsPerBatch": 20},
              "format": "json",
              "filter": "value.status == 'PAID'",
              "sink": {"contactPoints": ["unused:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "orders",
                       "columns": {"id": "value.id", "amount": "value.amount", "seq": "value.seq"}},
              "deadLetter": {"mode": "table", "table": "orders_dead_letters"},
              "trigger": {"intervalMs": 0, "availableNow": true},
              "checkpoint": {"retainBatches": 2}
            }
            """);
    private static final RecordTransformer TRANSFORMER = RecordTransformer.compile(JOB);
    private static final CheckpointMetadata METADATA = new CheckpointMetadata(CheckpointMetadata.FORMAT, JOB.jobId(),
            JOB.source().topics(), 1, 0);

    /** The files of every run but the one crashed in a write: fsync'd or not, nothing in process can tell. */
    private static final DurableFiles NO_CRASH = DurableFiles.failingAt((point, target) -> { });

    /** Records produced before the first run, and the batches they take. */
    private static final int RECORDS = 78;
    private static final int BATCHES = 5;
    /** Records produced while the crashed worker is down. */
    private static final int MORE_RECORDS = 9;

    /** The write timestamps of every record in one run, without a crash, over the records of a crash test. */
    private static Map<String, Set<Long>> uninterrupted;

    @TempDir
    Path dir;

    private final AtomicLong clockMs = new AtomicLong(1_900_000_000_000L);

    static Stream<Crash> crashes() {
        List<Crash> crashes = new ArrayList<>();
        for (long k : new long[] {0, 2, BATCHES - 1}) {
            for (ProtocolStep step : ProtocolStep.values()) {
                crashes.add(Crash.at(step, k));
            }
            // commits/k is made durable while batch k+1 runs: a power loss can take it back.
            crashes.add(Crash.losingCommit(ProtocolStep.AFTER_COMMIT_LOG, k));
            if (k > 0) {
                crashes.add(Crash.losingCommit(ProtocolStep.AFTER_WAL, k)); // offsets/k durable, commits/k-1 taken back
            }
            for (String log : List.of("offsets", "commits")) {
                for (AppendPoint point : AppendPoint.values()) {
                    crashes.add(Crash.appending(log, k, point, false));
                }
                crashes.add(Crash.appending(log, k, AppendPoint.WRITTEN, true));
            }
        }
        for (WritePoint point : WritePoint.values()) {
            crashes.add(Crash.writing("metadata", -1, point, false));
        }
        crashes.add(Crash.writing("metadata", -1, WritePoint.TEMP_REMOVED, true));
        return crashes.stream();
    }

    @BeforeAll
    static void runWithoutACrash(@TempDir Path cleanDir) {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        producer.produce(MORE_RECORDS);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        try (Checkpoint checkpoint = Checkpoint.open(cleanDir, METADATA, NO_CRASH)) {
            new MicroBatchEngine(JOB, checkpoint, new Pipeline(producer.source, TRANSFORMER, table),
                    new Controls(ProtocolHooks.NONE, new ProgressTracker(JOB.jobId(), 0, 1), () -> false,
                            new AtomicLong()::incrementAndGet)).run();
        }
        assertThat(table.rows()).isEqualTo(producer.expectedRows());
        uninterrupted = table.timestampsByRecord();
    }

    @Test
    void withoutACrashTheDataTakesTheBatchesTheCrashesAreAimedAt() {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        List<String> ahead = watchGroupOffsets(producer.source);

        assertThat(run(NO_CRASH, producer.source, table, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        CheckpointOnDisk disk = new CheckpointOnDisk(dir);
        assertThat(producer.source.reads()).hasSize(BATCHES);
        assertThat(disk.latest("commits")).hasValue(BATCHES - 1L);
        assertThat(table.rows()).isEqualTo(producer.expectedRows());
        assertThat(table.deadLetters().keySet()).isEqualTo(producer.expectedDeadLetters());
        assertThat(table.deadLetters().values()).allSatisfy(error -> assertThat(error.toString()).isNotBlank());
        assertThat(ahead).isEmpty();
        assertThat(producer.source.groupOffsets()).isEqualTo(latestOffsets(producer.source));

        // The data has what the crash tests rely on.
        Map<String, Set<String>> partitionsOfKey = new TreeMap<>();
        Map<String, Set<Integer>> batchesOfKey = new TreeMap<>();
        for (Produced p : producer.produced) {
            partitionsOfKey.computeIfAbsent(p.id(), id -> new TreeSet<>()).add(p.partition());
            batchesOfKey.computeIfAbsent(p.partition() + "/" + p.id(), id -> new TreeSet<>()).add(batchOf(producer.source, p));
        }
        assertThat(partitionsOfKey.values()).as("order ids in both orders partitions").anyMatch(ps -> ps.size() == 2);
        assertThat(batchesOfKey.entrySet()).as("payment ids repeated across batches")
                .anyMatch(e -> e.getKey().startsWith("payments") && e.getValue().size() >= 3);
        assertThat(producer.expectedDeadLetters()).hasSizeGreaterThanOrEqualTo(4);
        assertThat(producer.produced).as("gaps in offsets").anyMatch(p -> p.offset() > 0
                && producer.produced.stream().noneMatch(q -> q.partition().equals(p.partition()) && q.offset() == p.offset() - 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("crashes")
    void crashedEngineRecoversExactlyOnce(Crash crash) {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        InMemorySource source = producer.source;
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, crash.toString().hashCode());
        List<String> ahead = watchGroupOffsets(source);

        assertThatThrownBy(() -> run(crash.files(), source, table, crash.hooks(dir)))
                .isInstanceOf(SimulatedCrash.class).hasMessage("simulated crash: " + crash);

        CheckpointOnDisk disk = new CheckpointOnDisk(dir);
        long k = crash.batch();
        assertThat(disk.latest("offsets")).as("offsets/k after the crash")
                .isEqualTo(crash.walDurable() ? Optional.of(k) : k > 0 ? Optional.of(k - 1) : Optional.empty());
        long lastCommit = crash.commitDurable() ? k : crash.commitBeforeLost() ? k - 2 : k - 1;
        assertThat(disk.latest("commits")).as("commits/k after the crash")
                .isEqualTo(lastCommit >= 0 ? Optional.of(lastCommit) : Optional.empty());
        Optional<BatchOffsets> wal = crash.walDurable() ? Optional.of(disk.offsets(k)) : Optional.empty();
        if (crash.readsBatch()) {
            assertThat(source.reads()).hasSize((int) k + 1);
            assertThat(source.reads().get((int) k)).isEqualTo(wal.orElseThrow().partitions());
        } else {
            assertThat(source.reads()).as("nothing of batch k read").hasSize((int) Math.max(k, 0));
        }
        int readsBefore = source.reads().size();

        producer.produce(MORE_RECORDS);
        assertThat(run(NO_CRASH, source, table, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        List<Map<String, PartitionRange>> recoveryReads = source.reads().subList(readsBefore, source.reads().size());
        if (crash.walDurable() && !crash.commitDurable()) {
            assertThat(recoveryReads).isNotEmpty();
            assertThat(recoveryReads.get(0)).as("the replay of batch " + k + " reads what offsets/" + k + " recorded")
                    .isEqualTo(wal.get().partitions());
        }
        long last = disk.latest("offsets").orElseThrow();
        assertThat(disk.latest("commits")).as("every batch committed").hasValue(last);
        assertThat(disk.offsets(last).partitions()).as("to the latest offsets").allSatisfy((p, r) ->
                assertThat(r.end()).as(p).isEqualTo(source.offsets().get(p).latest()));
        assertThat(disk.tempFiles()).isEmpty();

        assertThat(table.rows()).isEqualTo(producer.expectedRows());
        assertThat(table.deadLetters().keySet()).isEqualTo(producer.expectedDeadLetters());
        assertThat(table.ties()).isEmpty();
        assertThat(table.timestampsByRecord()).as("each record written with the timestamp an uninterrupted run gives it,"
                + " however often").isEqualTo(uninterrupted);

        assertThat(ahead).as("group offsets ahead of the commit log").isEmpty();
        assertThat(source.groupOffsets()).isEqualTo(latestOffsets(source));

        // The checkpoint's totals count every record once, the replayed batch's included, though
        // the process that counted the first part of them is gone.
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, NO_CRASH)) {
            io.oncestream.contract.RecordTotals totals = MicroBatchEngine.recoveredTotals(checkpoint, null);
            assertThat(totals.read()).as("records read, over both processes").isEqualTo(RECORDS + MORE_RECORDS);
            assertThat(totals.deadLettered()).isEqualTo(producer.expectedDeadLetters().size());
            assertThat(totals.read()).isEqualTo(totals.filteredOut() + totals.written() + totals.deadLettered());
            ProgressTracker restarted = new ProgressTracker(JOB.jobId(), 0, 1);
            MicroBatchEngine.reportRecovered(checkpoint, restarted);
            new MicroBatchEngine(JOB, checkpoint, new Pipeline(source, TRANSFORMER, table),
                    new Controls(ProtocolHooks.NONE, restarted, () -> false, new AtomicLong()::incrementAndGet));
            assertThat(restarted.snapshot().totals().read()).as("a restarted worker reports the job's count")
                    .isEqualTo(RECORDS + MORE_RECORDS);
        }
    }

    static Stream<Arguments> volumeFaults() {
        List<Arguments> faults = new ArrayList<>();
        for (String log : List.of("offsets", "commits")) {
            for (AppendPoint point : AppendPoint.values()) {
                faults.add(Arguments.of(log, point));
            }
        }
        return faults.stream();
    }

    /**
     * Cassandra down while batches are written: the worker reports the driver's error while it
     * waits, and once the writes are acknowledged the error is no longer reported as current.
     */
    @Test
    void aSinkOutageIsReportedWhileItLastsOnly() {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 17);
        ProgressTracker progress = new ProgressTracker(JOB.jobId(), 0, 1);
        List<String> reported = new ArrayList<>();
        table.outages(2, () -> reported.add(progress.snapshot().lastError() + " (sink available: "
                + progress.snapshot().sinkAvailable() + ")"));
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, NO_CRASH)) {
            new MicroBatchEngine(JOB, checkpoint, new Pipeline(producer.source, TRANSFORMER, table),
                    new Controls(ProtocolHooks.NONE, progress, () -> false, clockMs::incrementAndGet)).run();
        }
        assertThat(reported).as("what the worker reported while Cassandra was down")
                .containsOnly("Cassandra: No node was available to execute the query (sink available: false)");
        assertThat(progress.snapshot().lastError()).as("once written, the outage is not reported as current").isNull();
        assertThat(progress.snapshot().sinkAvailable()).isTrue();
    }

    /**
     * The checkpoint volume is full (or read-only) while batch 2's log entry is written, at
     * every point of the write, three times over: the engine reports it and waits, goes on
     * where the logs say once the write succeeds, and the run ends exactly as one without a
     * fault, each record with the timestamp an uninterrupted run gives it; no temp file stays.
     */
    @ParameterizedTest(name = "{0}/2 at {1}")
    @MethodSource("volumeFaults")
    void aFullVolumeIsWaitedOutAndTheRunEndsExactlyOnce(String log, AppendPoint point) {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        producer.produce(MORE_RECORDS);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 11);
        AtomicInteger calls = new AtomicInteger();
        String file = log + "/2";
        DurableFiles full = DurableFiles.failingAppendAt((reached, target, start) -> {
            if (reached == point && target.getParent().getFileName().toString().equals(log) && LogFiles.batchAt(target, start) == 2
                    && calls.getAndIncrement() < 3) {
                throw new java.nio.file.FileSystemException(target.toString(), null, "No space left on device");
            }
        });
        ProgressTracker progress = new ProgressTracker(JOB.jobId(), 0, 1);
        // What the engine reports while it waits, sampled whenever it reads the clock (its pauses do).
        java.util.Set<String> reported = new java.util.LinkedHashSet<>();
        MicroBatchEngine.Outcome outcome;
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, full)) {
            // A clock that moves 100 ms a reading, so that the back-off pauses pass at once.
            outcome = new MicroBatchEngine(JOB, checkpoint, new Pipeline(producer.source, TRANSFORMER, table),
                    new Controls(ProtocolHooks.NONE, progress, () -> false, () -> {
                        if (progress.snapshot().lastError() != null) {
                            reported.add(progress.snapshot().lastError());
                        }
                        return clockMs.addAndGet(100);
                    })).run();
        }

        assertThat(outcome).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        // Half an entry is cut off and the append tried again until it passes; once the entry is
        // whole, the log read afresh says what it records (a batch to replay, or committed).
        assertThat(calls.get()).as("appends reaching " + point).isEqualTo(point == AppendPoint.HALF_WRITTEN ? 4 : 1);
        assertThat(reported).as("what the worker reported while it waited")
                .anySatisfy(e -> assertThat(e).contains(log + "/" + AppendBatchLog.SEGMENT).contains("No space left on device"));
        assertThat(progress.snapshot().lastError()).as("once written, the failure is not reported as current").isNull();
        CheckpointOnDisk disk = new CheckpointOnDisk(dir);
        long last = disk.latest("offsets").orElseThrow();
        assertThat(disk.latest("commits")).as("every batch committed").hasValue(last);
        assertThat(disk.tempFiles()).isEmpty();
        assertThat(producer.source.reads()).as("each batch read once: a batch whose commit failed is not written again")
                .hasSize((int) last + 1);
        assertThat(producer.source.groupOffsets()).as("the group at the end").isEqualTo(latestOffsets(producer.source));
        assertThat(table.rows()).isEqualTo(producer.expectedRows());
        assertThat(table.deadLetters().keySet()).isEqualTo(producer.expectedDeadLetters());
        assertThat(table.timestampsByRecord()).isEqualTo(uninterrupted);
    }

    /**
     * availableNow drains what Kafka held when the run started and asks for offsets once per
     * batch it plans: once its commits reach those targets it ends without asking again (the
     * consumer's pending fetch at the end of a topic would hold that request up on the broker),
     * also when records arrived during the run, which it leaves for the next run.
     */
    @Test
    void availableNowEndsOnReachingItsTargetsWithoutAskingKafkaAgain() {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        InMemorySource source = producer.source;
        Map<String, Long> targets = latestOffsets(source);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        ProtocolHooks moreAfterFirstCommit = (step, batchId) -> {
            if (step == ProtocolStep.AFTER_COMMIT_LOG && batchId == 0) {
                producer.produce(MORE_RECORDS);
            }
        };

        int askedBefore = source.offsetsAsked();
        assertThat(run(NO_CRASH, source, table, moreAfterFirstCommit)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        int asked = source.offsetsAsked() - askedBefore;

        CheckpointOnDisk disk = new CheckpointOnDisk(dir);
        assertThat(source.reads()).hasSize(BATCHES);
        assertThat(disk.latest("commits")).hasValue(BATCHES - 1L);
        assertThat(disk.offsets(BATCHES - 1L).partitions()).as("ends at the targets, not at what arrived later")
                .allSatisfy((p, r) -> assertThat(r.end()).as(p).isEqualTo(targets.get(p)));
        assertThat(latestOffsets(source)).as("records arrived during the run").isNotEqualTo(targets);
        assertThat(asked).as("offsets asked: once per batch planned").isEqualTo(BATCHES);

        // The next run takes what arrived meanwhile.
        assertThat(run(NO_CRASH, source, table, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);
        assertThat(table.rows()).isEqualTo(producer.expectedRows());
        assertThat(table.deadLetters().keySet()).isEqualTo(producer.expectedDeadLetters());
    }

    /**
     * A crash between the last batch's commit log and its group commit, and nothing new in
     * Kafka: the restarted worker has no batch to run, and still brings the consumer group up
     * to the commit log, so a completed job shows no lag.
     */
    @Test
    void aCrashBeforeTheLastGroupCommitLeavesNoLagBehind() {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        InMemorySource source = producer.source;
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        List<String> ahead = watchGroupOffsets(source);
        Crash crash = Crash.at(ProtocolStep.AFTER_COMMIT_LOG, BATCHES - 1);
        assertThatThrownBy(() -> run(crash.files(), source, table, crash.hooks(dir))).isInstanceOf(SimulatedCrash.class);
        assertThat(source.groupOffsets()).as("the group one batch behind").isNotEqualTo(latestOffsets(source));
        int reads = source.reads().size();

        assertThat(run(NO_CRASH, source, table, ProtocolHooks.NONE)).isEqualTo(MicroBatchEngine.Outcome.COMPLETED);

        assertThat(source.reads()).as("no batch to run").hasSize(reads);
        assertThat(source.groupOffsets()).isEqualTo(latestOffsets(source));
        assertThat(ahead).isEmpty();
        assertThat(table.rows()).isEqualTo(producer.expectedRows());
    }

    /**
     * The mutations of the protocol model (docs/protocol.md §6, {@code model/protocol.pml}),
     * done to a run of the real engine where the mutated code would act: a sink that reports
     * acknowledgements it does not have; the write-ahead entry lost to a power loss after the
     * batch was read (not fsync'd); a replay from a fresh timestamp base; a planner that moves
     * past the open batch (as if it were committed); group offsets committed before the commit
     * log. Each must be caught by a check of {@link #crashedEngineRecoversExactlyOnce}: the
     * exact table, each record's timestamp, the replayed ranges, group offsets never ahead.
     */
    @ParameterizedTest
    @EnumSource(Mutation.class)
    void eachMutationOfTheProtocolIsCaughtByTheseChecks(Mutation mutation, @TempDir Path baselineDir) {
        Producer producer = new Producer();
        producer.produce(RECORDS);
        Map<String, Set<Long>> baseline = timestampsWithoutACrash(baselineDir, RECORDS);
        InMemorySource source = producer.source;
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 5);
        List<String> ahead = watchGroupOffsets(source);
        long k = BATCHES - 1;
        ProtocolHooks hooks = switch (mutation) {
            case COMMIT_BEFORE_ACK -> Crash.at(ProtocolStep.AFTER_COMMIT_LOG, k).hooks(dir);
            case GROUP_BEFORE_COMMIT -> (step, batchId) -> {
                if (step == ProtocolStep.AFTER_SINK && batchId == k) {
                    Map<String, ChainPoint> ends = new TreeMap<>();
                    new CheckpointOnDisk(dir).offsets(k).partitions().forEach((p, r) -> ends.put(p, new ChainPoint(r.end(), 0)));
                    source.commitGroupOffsets(ends);
                    Crash.at(step, k).hooks(dir).reached(step, batchId);
                }
            };
            default -> Crash.at(ProtocolStep.MID_WRITE, k).hooks(dir);
        };
        RowSink sink = mutation == Mutation.COMMIT_BEFORE_ACK ? new AcknowledgesTooSoon(table, k) : table;
        assertThatThrownBy(() -> run(NO_CRASH, source, sink, hooks)).isInstanceOf(SimulatedCrash.class);

        BatchOffsets wal = new CheckpointOnDisk(dir).offsets(k);
        switch (mutation) {
            case OFFSETS_NOT_SYNCED -> {
                assertThat(LogFiles.dropLastEntry(dir.resolve("offsets"))).isEqualTo(k);
                producer.produce(MORE_RECORDS);
            }
            case FRESH_TIMESTAMPS_ON_REPLAY -> {
                assertThat(LogFiles.dropLastEntry(dir.resolve("offsets"))).isEqualTo(k);
                Map<String, PartitionRange> fresh = new TreeMap<>();
                wal.partitions().forEach((p, r) -> fresh.put(p, new PartitionRange(r.start(), r.end(), 0)));
                AppendBatchLog<BatchOffsets> offsets = new AppendBatchLog<>(dir.resolve("offsets"), BatchOffsets.class, NO_CRASH, 1024);
                offsets.add(k, new BatchOffsets(fresh, wal.lostRecords(), wal.plannedAtMs()));
                offsets.close();
            }
            case SKIP_OPEN_BATCH -> {
                AppendBatchLog<BatchCommit> commits = new AppendBatchLog<>(dir.resolve("commits"), BatchCommit.class, NO_CRASH, 1024);
                commits.add(k, new CheckpointOnDisk(dir).commit(k - 1));
                commits.close();
            }
            default -> { }
        }
        int readsBefore = source.reads().size();
        run(NO_CRASH, source, table, ProtocolHooks.NONE);

        List<String> caught = new ArrayList<>();
        if (!table.rows().equals(producer.expectedRows())) {
            caught.add("the table");
        }
        if (mutation != Mutation.OFFSETS_NOT_SYNCED && !table.timestampsByRecord().equals(baseline)) {
            caught.add("the timestamps");
        }
        List<Map<String, PartitionRange>> recoveryReads = source.reads().subList(readsBefore, source.reads().size());
        if (mutation != Mutation.COMMIT_BEFORE_ACK && mutation != Mutation.GROUP_BEFORE_COMMIT
                && (recoveryReads.isEmpty() || !recoveryReads.get(0).equals(wal.partitions()))) {
            caught.add("the replayed ranges");
        }
        if (!ahead.isEmpty()) {
            caught.add("group offsets ahead of the commit log");
        }
        System.out.println("[engine] mutation " + mutation + " caught by: " + caught);
        assertThat(caught).as(mutation + " is caught").contains(switch (mutation) {
            case COMMIT_BEFORE_ACK, SKIP_OPEN_BATCH -> "the table";
            case OFFSETS_NOT_SYNCED -> "the replayed ranges";
            case FRESH_TIMESTAMPS_ON_REPLAY -> "the timestamps";
            case GROUP_BEFORE_COMMIT -> "group offsets ahead of the commit log";
        });
    }

    /** The mutations of {@code model/protocol.pml}, in the engine. */
    enum Mutation { COMMIT_BEFORE_ACK, OFFSETS_NOT_SYNCED, FRESH_TIMESTAMPS_ON_REPLAY, SKIP_OPEN_BATCH, GROUP_BEFORE_COMMIT }

    /** Applies half of batch {@code batch}'s writes and reports all of them acknowledged. */
    private static final class AcknowledgesTooSoon implements RowSink {
        private final LastWriteWinsSink table;
        private final long batch;
        private long calls;

        AcknowledgesTooSoon(LastWriteWinsSink table, long batch) {
            this.table = table;
            this.batch = batch;
        }

        @Override
        public Write prepare(io.oncestream.engine.transform.SourceRecord origin, Map<String, Object> columns, long ts)
                throws BadRowException {
            return table.prepare(origin, columns, ts);
        }

        @Override
        public Write prepareDeadLetter(io.oncestream.engine.transform.SourceRecord record, String error, long batchId, long ts) {
            return table.prepareDeadLetter(record, error, batchId, ts);
        }

        @Override
        public List<String> primaryKeyColumns() {
            return table.primaryKeyColumns();
        }

        @Override
        public Write prepareDelete(io.oncestream.engine.transform.SourceRecord origin, Map<String, Object> key, long ts)
                throws BadRowException {
            return table.prepareDelete(origin, key, ts);
        }

        @Override
        public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
            if (calls++ != batch) {
                return table.writeAll(writes, listener);
            }
            table.writeAll(writes.subList(0, writes.size() / 2), SinkListener.NONE);
            listener.acknowledged(writes.size());
            return List.of();
        }

        @Override
        public void close() {
        }
    }

    private static Map<String, Set<Long>> timestampsWithoutACrash(Path cleanDir, int records) {
        Producer producer = new Producer();
        producer.produce(records);
        LastWriteWinsSink table = new LastWriteWinsSink("id", 3, 1);
        try (Checkpoint checkpoint = Checkpoint.open(cleanDir, METADATA, NO_CRASH)) {
            new MicroBatchEngine(JOB, checkpoint, new Pipeline(producer.source, TRANSFORMER, table),
                    new Controls(ProtocolHooks.NONE, new ProgressTracker(JOB.jobId(), 0, 1), () -> false,
                            new AtomicLong()::incrementAndGet)).run();
        }
        return table.timestampsByRecord();
    }


    private MicroBatchEngine.Outcome run(DurableFiles files, InMemorySource source, RowSink sink, ProtocolHooks hooks) {
        try (Checkpoint checkpoint = Checkpoint.open(dir, METADATA, files)) {
            return new MicroBatchEngine(JOB, checkpoint, new Pipeline(source, TRANSFORMER, sink),
                    new Controls(hooks, new ProgressTracker(JOB.jobId(), 0, 1), () -> false, clockMs::incrementAndGet))
                    .run();
        }
    }

    /** Collects every group-offset commit that passes the ends of the newest commit on disk. */
    private List<String> watchGroupOffsets(InMemorySource source) {
        List<String> ahead = new ArrayList<>();
        source.checkCommits(ends -> {
            CheckpointOnDisk disk = new CheckpointOnDisk(dir);
            Map<String, PartitionRange> committed = disk.latest("commits")
                    .map(c -> disk.offsets(c).partitions()).orElse(Map.of());
            ends.forEach((p, end) -> {
                PartitionRange r = committed.get(p);
                if (r == null || end > r.end()) {
                    ahead.add(p + " at " + end + ", committed " + (r == null ? "nothing" : "up to " + r.end()));
                }
            });
        });
        return ahead;
    }

    private static Map<String, Long> latestOffsets(InMemorySource source) {
        return source.offsets().entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().latest(), (a, b) -> a, TreeMap::new));
    }

    private static int batchOf(InMemorySource source, Produced p) {
        for (int i = 0; i < source.reads().size(); i++) {
            PartitionRange r = source.reads().get(i).get(p.partition());
            if (r != null && r.start() <= p.offset() && p.offset() < r.end()) {
                return i;
            }
        }
        return -1;
    }

    /** One produced record: {@code bad} if its value is cut short or has a null id. */
    record Produced(String partition, long offset, String id, String status, long amount, long seq, boolean bad) {
    }

    /**
     * Produces records with colliding ids to the source and computes, on its own, the table
     * they must give: every good PAID record applied in the order produced, the last one of an
     * id winning. That order is the write-timestamp order: orders records carry increasing
     * timestamps, and payment ids (all with the same old timestamp) are never order ids.
     */
    private static final class Producer {
        static final List<String> PARTITIONS = List.of("orders-0", "orders-1", "payments-0");
        static final long ORDERS_START_MS = 1_800_000_000_000L;
        static final long PAYMENTS_MS = 1_000L;

        final InMemorySource source = new InMemorySource().partition("orders", 0, 3).partition("orders", 1, 0)
                .partition("payments", 0, 0);
        final List<Produced> produced = new ArrayList<>();
        private final Random random = new Random(11);
        private final Map<String, Long> next = new TreeMap<>(Map.of("orders-0", 3L, "orders-1", 0L, "payments-0", 0L));
        private long seq;

        void produce(int count) {
            for (int i = 0; i < count; i++) {
                String partition = PARTITIONS.get(random.nextInt(PARTITIONS.size()));
                long offset = next.get(partition) + (random.nextInt(8) == 0 ? 1 : 0); // a gap now and then
                next.put(partition, offset + 1);
                long s = seq++;
                boolean payment = partition.startsWith("payments");
                String id = payment ? "p" + random.nextInt(3) : "o" + random.nextInt(6);
                String status = random.nextInt(3) == 0 ? "NEW" : "PAID";
                long amount = 10 + random.nextInt(90);
                boolean bad = s % 11 == 5 || s % 11 == 10;
                String json;
                if (s % 11 == 5) {
                    json = "{\"id\": \"" + id + "\", \"status\": \"PAID\", \"amo";
                } else if (s % 11 == 10) {
                    json = "{\"id\": null, \"status\": \"PAID\", \"amount\": " + amount + ", \"seq\": " + s + "}";
                } else {
                    json = "{\"id\": \"" + id + "\", \"status\": \"" + status + "\", \"amount\": " + amount + ", \"seq\": " + s + "}";
                }
                source.append(partition, offset, payment ? PAYMENTS_MS : ORDERS_START_MS + s, id, json);
                produced.add(new Produced(partition, offset, id, status, amount, s, bad));
            }
            // A transaction marker ends orders-1: its latest offset has no record.
            next.put("orders-1", next.get("orders-1") + 1);
            source.skipTo("orders-1", next.get("orders-1"));
        }

        Map<String, Map<String, Object>> expectedRows() {
            Map<String, Map<String, Object>> rows = new TreeMap<>();
            for (Produced p : produced) {
                if (!p.bad() && p.status().equals("PAID")) {
                    rows.put(p.id(), Map.of("id", p.id(), "amount", p.amount(), "seq", p.seq()));
                }
            }
            return rows;
        }

        Set<String> expectedDeadLetters() {
            return produced.stream().filter(Produced::bad).map(p -> p.partition() + "@" + p.offset())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /**
     * Where the first run crashes: at a protocol step of batch {@code batch}, or at a point of the
     * write of {@code file} ({@code offsets/k}, {@code commits/k} or {@code metadata}), then
     * optionally losing power there.
     */
    record Crash(ProtocolStep step, String file, WritePoint point, AppendPoint appendPoint, boolean powerLoss, long batch) {

        static Crash at(ProtocolStep step, long batch) {
            return new Crash(step, null, null, null, false, batch);
        }

        /**
         * At {@code step} of batch {@code batch}, then a power loss that takes back the newest
         * commit, whose {@code fdatasync} runs while the next batch runs: after the commit log,
         * commits/batch; after the write-ahead entry, commits/batch-1 (offsets/batch carries it).
         */
        static Crash losingCommit(ProtocolStep step, long batch) {
            return new Crash(step, null, null, null, true, batch);
        }

        static Crash writing(String file, long batch, WritePoint point, boolean powerLoss) {
            return new Crash(null, file, point, null, powerLoss, batch);
        }

        /** While batch {@code batch}'s entry is appended to {@code log} ({@code offsets} or {@code commits}). */
        static Crash appending(String log, long batch, AppendPoint point, boolean powerLoss) {
            return new Crash(null, log, null, point, powerLoss, batch);
        }

        /** Whether the entry being written is there after the crash. */
        private boolean fileLeft() {
            if (appendPoint != null) {
                return appendPoint.compareTo(AppendPoint.WRITTEN) >= 0 && !powerLoss;
            }
            return point.compareTo(WritePoint.LINKED) >= 0 && !powerLoss;
        }

        boolean walDurable() {
            if (step != null) {
                return true;
            }
            return file.startsWith("commits") || file.startsWith("offsets") && fileLeft();
        }

        boolean commitDurable() {
            if (step != null) {
                return step == ProtocolStep.AFTER_COMMIT_LOG && !powerLoss;
            }
            return file.startsWith("commits") && fileLeft();
        }

        /** Whether the power loss took back the commit of the batch before: the commit log ends two batches before the offset log. */
        boolean commitBeforeLost() {
            return step != null && powerLoss && step != ProtocolStep.AFTER_COMMIT_LOG;
        }

        /** Whether the first run read batch k before crashing. */
        boolean readsBatch() {
            return step != null ? step != ProtocolStep.AFTER_WAL : file.startsWith("commits");
        }

        ProtocolHooks hooks(Path checkpoint) {
            return (reached, batchId) -> {
                if (reached == step && batchId == batch) {
                    if (powerLoss) {
                        long lost = LogFiles.dropLastEntry(checkpoint.resolve("commits"));
                        assertThat(lost).as("the commit taken back").isEqualTo(step == ProtocolStep.AFTER_COMMIT_LOG ? batch : batch - 1);
                    }
                    throw new SimulatedCrash(this);
                }
            };
        }

        DurableFiles files() {
            if (step != null) {
                return NO_CRASH;
            }
            if (appendPoint != null) {
                return DurableFiles.failingAppendAt((reached, target, start) -> {
                    if (reached == appendPoint && target.getParent().getFileName().toString().equals(file)
                            && LogFiles.batchAt(target, start) == batch) {
                        if (powerLoss) {
                            // Not fdatasync'd yet: after a power loss the appended bytes may be gone.
                            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(target,
                                    java.nio.file.StandardOpenOption.WRITE)) {
                                channel.truncate(start);
                            }
                        }
                        throw new SimulatedCrash(this);
                    }
                });
            }
            return DurableFiles.failingAt((reached, target) -> {
                if (reached == point && target.endsWith(file)) {
                    if (powerLoss) {
                        // The directory was not fsync'd since the link: after a power loss the name may be gone.
                        Files.delete(target);
                    }
                    throw new SimulatedCrash(this);
                }
            });
        }

        @Override
        public String toString() {
            if (step != null) {
                return step + " of batch " + batch + (powerLoss ? ", then power loss taking back commits/"
                        + (step == ProtocolStep.AFTER_COMMIT_LOG ? batch : batch - 1) : "");
            }
            return appendPoint != null ? "appending " + file + "/" + batch + ", at " + appendPoint + (powerLoss ? ", then power loss" : "")
                    : "writing " + file + ", at " + point + (powerLoss ? ", then power loss" : "");
        }
    }

    /** Stops the engine where a killed process would stop; nothing in the engine catches it. */
    static final class SimulatedCrash extends RuntimeException {
        SimulatedCrash(Crash crash) {
            super("simulated crash: " + crash, null, false, false);
        }
    }
}
