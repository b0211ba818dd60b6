package io.oncestream.engine;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.RecordTotals;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.CheckpointUnavailableException;
import io.oncestream.engine.checkpoint.RecoveredChain;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.plan.BatchPlanner;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.plan.Plan;
import io.oncestream.engine.plan.Seed;

/**
 * The exactly-once protocol of docs/protocol.md §3, for one batch N:
 * <ol>
 * <li><b>plan</b> ({@link BatchPlanner}): replay an open batch exactly, or take the next range;</li>
 * <li><b>write ahead</b>: {@code offsets/N}, durably, before a record is read;</li>
 * <li><b>read</b> exactly the planned ranges, each record with its write timestamp
 *     ({@link WriteTimestamps}), and filter and map it ({@link RecordDispatch});</li>
 * <li><b>write</b> every row, retried until Cassandra acknowledged all of them;</li>
 * <li><b>commit</b>: {@code commits/N}, durably;</li>
 * <li><b>group offsets</b>: the ends of N to the consumer group, for lag tools.</li>
 * </ol>
 * A crash anywhere leaves either an open batch, replayed by step 1 with the same records and
 * the same write timestamps, or a committed one; either way the table ends the same. What runs
 * batch after batch, and waits, is {@link MicroBatchEngine}; what follows a commit (progress,
 * purge) is {@link AfterCommit}.
 */
final class BatchProtocol {

    /** The engine's log lines carry one name, whichever of its classes writes them. */
    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    private final JobConfig config;
    private final Checkpoint checkpoint;
    private final RecordSource source;
    private final RowSink sink;
    private final RecordDispatch dispatch;
    private final AfterCommit afterCommit;
    private final Controls controls;
    private final ProgressTracker progress;
    private final Epoch epoch;
    private boolean groupOffsetsResynced;
    /** How the first batch starts, once decided ({@link #seed()}). */
    private Seed seed;
    private boolean seedDecided;
    /** The checkpoint's counts since the job started, as of the last committed batch. */
    private RecordTotals totals;
    /** What caps a new batch besides {@code maxRecordsPerBatch}: the heap. */
    private BatchMemory memory = BatchMemory.ofThisJvm();
    private long lastBatchRecords;
    private boolean flushReported;
    private boolean lastBatchCutByMemory;

    BatchProtocol(JobConfig config, Checkpoint checkpoint, Pipeline pipeline, Controls controls, Epoch epoch, RecordTotals totals) {
        this.config = config;
        this.checkpoint = checkpoint;
        this.source = pipeline.source();
        this.sink = pipeline.sink();
        this.dispatch = new RecordDispatch(config, pipeline.transformer(), pipeline.sink());
        this.afterCommit = new AfterCommit(checkpoint, controls.progress(), config.checkpoint().retainBatches());
        this.controls = controls;
        this.progress = controls.progress();
        this.epoch = epoch;
        this.totals = totals;
    }

    /** Batches sized for another heap than this JVM's (tests). */
    void memory(BatchMemory memory) {
        this.memory = memory;
    }

    /** The checkpoint's counts since the job started, as of the last committed batch. */
    RecordTotals totals() {
        return totals;
    }

    /** Step 1's input: the ends of each owned partition now; the first time, also the group resync. */
    Map<String, KafkaOffsets> latestOffsets() {
        Map<String, KafkaOffsets> kafka = source.offsets(nextStarts());
        if (!groupOffsetsResynced) {
            resyncGroupOffsets();
        }
        return kafka;
    }

    /** Where the next batch starts if it follows a committed one (its ends); null for a first batch or a replay. */
    private Map<String, Long> nextStarts() {
        Optional<BatchLog.Entry<BatchOffsets>> last = checkpoint.offsets().latest();
        Optional<BatchLog.Entry<BatchCommit>> committed = checkpoint.commits().latest();
        if (last.isEmpty() || committed.isEmpty() || committed.get().batchId() != last.get().batchId()) {
            return null;
        }
        Map<String, Long> ends = new TreeMap<>();
        last.get().value().partitions().forEach((p, r) -> ends.put(p, r.end()));
        return ends;
    }

    /** Whether the consumer group was brought up to the last commit since the start. */
    boolean groupResynced() {
        return groupOffsetsResynced;
    }

    /** Whether step 1 would find nothing to read in {@code kafka}. */
    boolean idleAt(Map<String, KafkaOffsets> kafka) {
        return plan(kafka, config.source().maxRecordsPerBatch()) instanceof Plan.Idle;
    }

    /** The records of the last batch run (its offsets' span). */
    long lastBatchRecords() {
        return lastBatchRecords;
    }

    /** Whether the last batch run was new and cut short to fit the heap, records beyond it waiting: more can follow at once. */
    boolean lastBatchCutByMemory() {
        return lastBatchCutByMemory;
    }

    /**
     * Runs steps 1 to 6 for the ends {@code kafka}, {@code started} being when planning began, a
     * new batch holding at most {@code maxRecords} (and what fits the heap). Returns false, having
     * written nothing, if there is nothing to read.
     */
    boolean runBatch(Map<String, KafkaOffsets> kafka, long started, long maxRecords) {
        progress.planned(kafka);
        long max = memory.maxRecords(maxRecords);
        Optional<PlannedBatch> planned = planAndWriteAhead(kafka, max);
        if (planned.isEmpty()) {
            return false;
        }
        PlannedBatch batch = planned.get();
        lastBatchRecords = batch.offsets().size();
        lastBatchCutByMemory = !batch.replay() && max < maxRecords && recordsBeyond(batch, kafka);
        long walDone = clock();
        progress.running(batch.id(), batch.offsets().partitions());
        controls.hooks().reached(ProtocolStep.AFTER_WAL, batch.id());
        BatchCounts counts = new BatchCounts();
        Map<String, Long> chain = new TreeMap<>();
        BatchWriteListener listener = new BatchWriteListener(batch.id(), batch.offsets().size(), controls);
        long[] flushingMs = {0};
        HeldWrites held = new HeldWrites(memory.flushBytes(), flush -> {
            long before = clock();
            write(batch, flush, counts, listener);
            progress.state(EngineState.READING);
            flushingMs[0] += clock() - before;
        });
        read(batch, counts, chain, held);
        memory.read(counts.read(), counts.bytesRead());
        long readDone = clock() - flushingMs[0]; // flushes during the read count as writing
        listener.total(held.writes());
        if (!held.rest().isEmpty() || held.flushes() == 0) {
            write(batch, held.rest(), counts, listener);
        }
        counts.writesAcknowledged(held.writes());
        long writeDone = clock();
        controls.hooks().reached(ProtocolStep.AFTER_SINK, batch.id());
        commit(batch, counts, chain, writeDone - started);
        afterCommit.committed(batch, counts, new BatchTimings(started, walDone, readDone, writeDone, clock()));
        return true;
    }

    /** Whether {@code kafka} has records beyond any of the batch's partitions' ends. */
    private static boolean recordsBeyond(PlannedBatch batch, Map<String, KafkaOffsets> kafka) {
        return batch.offsets().partitions().entrySet().stream()
                .anyMatch(e -> kafka.containsKey(e.getKey()) && kafka.get(e.getKey()).latest() > e.getValue().end());
    }

    /** Steps 1 and 2: the open batch to replay, or the next one, its {@code offsets/N} written. */
    private Optional<PlannedBatch> planAndWriteAhead(Map<String, KafkaOffsets> kafka, long maxRecords) {
        Plan plan = plan(kafka, maxRecords);
        if (plan instanceof Plan.Idle) {
            return Optional.empty();
        }
        if (plan instanceof Plan.Replay r) {
            LOG.log(Level.INFO, "replaying open batch " + r.batchId() + " with its recorded ranges " + r.offsets().partitions());
            return Optional.of(new PlannedBatch(r.batchId(), r.offsets(), true));
        }
        Plan.Next n = (Plan.Next) plan;
        if (!checkpoint.offsets().add(n.batchId(), n.offsets())) {
            throw new CheckpointException(checkpoint.offsets().directory().resolve(Long.toString(n.batchId())),
                    "already exists although the planner found no open batch");
        }
        if (n.offsets().lostRecords() > 0) {
            LOG.log(Level.WARNING, "batch " + n.batchId() + " skips " + n.offsets().lostRecords()
                    + " records Kafka no longer has (failOnDataLoss: false)");
        }
        return Optional.of(new PlannedBatch(n.batchId(), n.offsets(), false));
    }

    private Plan plan(Map<String, KafkaOffsets> kafka, long maxRecords) {
        return BatchPlanner.plan(new BatchPlanner.Input(checkpoint.offsets().latest(), checkpoint.commits().latest(),
                kafka, config.source().startingOffsets(), maxRecords,
                config.source().failOnDataLoss(), clock(), seed()));
    }

    /**
     * Step 3: reads exactly the batch's ranges, each partition's write timestamps going on from
     * its base; {@code chain} ends with each partition's last one. The writes go to {@code held},
     * which flushes them whenever they reach a 32nd of the heap.
     */
    private void read(PlannedBatch batch, BatchCounts counts, Map<String, Long> chain, HeldWrites held) {
        progress.state(EngineState.READING);
        batch.offsets().partitions().forEach((p, r) -> chain.put(p, r.timestampBase()));
        long half = Math.max(1, batch.offsets().size() / 2);
        source.read(batch.offsets().partitions(), record -> {
            long read = counts.recordRead();
            long ts = WriteTimestamps.next(chain.get(record.partitionKey()), record.timestampMs());
            chain.put(record.partitionKey(), ts);
            counts.bytesRead(record.key(), record.value());
            RecordDispatch.Routed routed = dispatch.route(batch.id(), record, ts);
            counts.routed(routed);
            if (!routed.filteredOut()) {
                held.add(routed.write(), length(record.key()) + length(record.value()));
                if (!flushReported && held.flushes() > 0) {
                    flushReported = true;
                    LOG.log(Level.INFO, "a batch's writes are flushed while it is read, each time they reach " + (memory.flushBytes() >> 10)
                            + " KiB, a 32nd of the heap (first in batch " + batch.id()
                            + (batch.replay() ? ", a replay" : "") + ", whose records average " + counts.bytesRead() / read
                            + " bytes), and the read goes on once Cassandra acknowledged them");
                }
            }
            if (read == half) {
                controls.hooks().reached(ProtocolStep.MID_READ, batch.id());
            }
        });
    }

    private static long length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    /** Step 4 for {@code writes}: every one acknowledged, and rows refused even alone written as dead letters. */
    private void write(PlannedBatch batch, List<RowSink.Write> writes, BatchCounts counts, BatchWriteListener listener) {
        progress.state(EngineState.WRITING);
        counts.deadLettered(dispatch.deadLetterRefused(batch.id(), sink.writeAll(writes, listener), listener));
        progress.sinkAvailable(true);
    }

    /** Steps 5 and 6: {@code commits/N}, then the consumer group's offsets. */
    private void commit(PlannedBatch batch, BatchCounts counts, Map<String, Long> chain, long durationMs) {
        progress.state(EngineState.COMMITTING);
        RecordTotals after = totals.plus(counts.totals());
        commitDurably(batch.id(), new BatchCommit(counts.read(), counts.filteredOut(), counts.written(), counts.deadLettered(),
                durationMs, chain, clock(), after));
        totals = after;
        controls.hooks().reached(ProtocolStep.AFTER_COMMIT_LOG, batch.id());
        try {
            source.commitGroupOffsets(batch.offsets().chainAfter(chain));
        } catch (SourceException e) {
            // The commit log is the truth: the group is for lag tools, and a lost volume's last
            // resort. The next batch commits again.
            progress.error(e.getMessage());
            LOG.log(Level.WARNING, e.getMessage());
        }
    }

    /**
     * Writes {@code commits/N}. A volume that is full or read-only now is waited out here, with
     * back-off, instead of in {@link MicroBatchEngine#run()}: every row of the batch is
     * acknowledged, so only the commit is missing, and replaying the whole batch on each try
     * would rewrite it for nothing. An attempt that failed after linking the file leaves it in
     * place: the next finds it there, which is this batch's own commit.
     */
    private void commitDurably(long batchId, BatchCommit commit) {
        Backoff backoff = new Backoff(1_000, 5_000);
        boolean failedBefore = false;
        String failure = null;
        while (true) {
            try {
                if (checkpoint.commits().add(batchId, commit) || failedBefore) {
                    if (failedBefore) {
                        progress.state(EngineState.COMMITTING);
                        progress.errorPassed(failure);
                    }
                    return;
                }
                throw new CheckpointException(checkpoint.commits().directory().resolve(Long.toString(batchId)),
                        "already exists: batch " + batchId + " was committed twice");
            } catch (CheckpointUnavailableException e) {
                failedBefore = true;
                failure = e.getMessage();
                progress.state(EngineState.WAITING_FOR_CHECKPOINT);
                progress.error(failure);
                long delayMs = backoff.next();
                LOG.log(Level.WARNING, "batch " + batchId + " is written but cannot be committed yet, retrying in " + delayMs
                        + " ms (its rows are not written again; free space on the checkpoint volume or make it writable): "
                        + e.getMessage());
                Pause.upTo(delayMs, controls.clockMs(), controls.stopRequested());
                if (controls.stopRequested().getAsBoolean()) {
                    throw new StopRequestedException(); // the batch stays open and is replayed: safe
                }
            }
        }
    }

    /**
     * Once per start, with Kafka reachable: the ends of the last committed batch to the consumer
     * group. A crash between {@code commits/N} and its group commit leaves the group one batch
     * behind, and with nothing new to read no later batch would correct it (a completed job
     * would show lag). Never ahead of the table: these ends are committed.
     */
    private void resyncGroupOffsets() {
        Optional<BatchLog.Entry<BatchCommit>> last = checkpoint.commits().latest();
        Optional<BatchOffsets> offsets = last.flatMap(c -> checkpoint.offsets().get(c.batchId()));
        if (offsets.isPresent()) {
            try {
                source.commitGroupOffsets(offsets.get().chainAfter(last.get().value().lastTimestamps()));
            } catch (SourceException e) {
                LOG.log(Level.WARNING, "cannot bring the consumer group up to the last commit yet (tried again with the next batch;"
                        + " only lag tools read the group): " + e.getMessage());
                return;
            }
        }
        groupOffsetsResynced = true;
    }

    /**
     * How the checkpoint's first batch starts: from its epoch's savepoint, and, for a checkpoint
     * without any batch whose consumer group holds chain points of this job (its volume was
     * lost), from those where they are further on. They are recorded in the checkpoint before
     * the first batch is planned, so a restart plans from the same points. A group point is
     * the end of a batch that was committed, with the last timestamp its chain gave (the group
     * is committed after {@code commits/N}, invariant I5), so the chain goes on exactly.
     */
    Seed seed() {
        if (seedDecided) {
            return seed;
        }
        if (checkpoint.offsets().latest().isPresent() || checkpoint.commits().latest().isPresent()) {
            seedDecided = true;
            seed = epoch.seed();
            return seed;
        }
        Optional<RecoveredChain> recorded = checkpoint.recovered();
        if (recorded.isEmpty()) {
            Map<String, ChainPoint> group = source.committedChainPoints();
            if (!group.isEmpty()) {
                LOG.log(Level.WARNING, "the checkpoint has no batch but the consumer group holds this job's chain points "
                        + group + ": its volume was lost; going on from them");
                recorded = Optional.of(checkpoint.recover(new RecoveredChain(group, clock())));
            }
        }
        Seed base = epoch.seed();
        seedDecided = true;
        if (recorded.isEmpty()) {
            seed = base;
            return seed;
        }
        Map<String, ChainPoint> points = new TreeMap<>(base == null ? Map.of() : base.partitions());
        recorded.get().partitions().forEach((p, point) -> points.merge(p, point, (a, b) -> b.offset() > a.offset() ? b : a));
        seed = new Seed(points, base == null ? p -> true : base.startsFromStartingOffsets());
        return seed;
    }

    private long clock() {
        return controls.clockMs().getAsLong();
    }
}
