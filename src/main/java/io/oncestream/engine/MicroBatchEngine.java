package io.oncestream.engine;

import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import io.oncestream.contract.EngineState;
import io.oncestream.engine.checkpoint.RecordTotals;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointContents;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.CheckpointSeal;
import io.oncestream.engine.checkpoint.ChainPoint;
import io.oncestream.engine.checkpoint.RecoveredChain;
import io.oncestream.engine.checkpoint.CheckpointUnavailableException;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.DeadLetterMode;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.plan.BatchPlanner;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.plan.Plan;
import io.oncestream.engine.plan.Seed;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;
import io.oncestream.engine.transform.TransformResult;

/**
 * The exactly-once micro-batch loop. For batch N:
 * <ol>
 * <li>plan ({@link BatchPlanner}): replay an open batch exactly, or take the next range;</li>
 * <li>write {@code offsets/N} durably before reading a record;</li>
 * <li>read exactly the planned ranges;</li>
 * <li>filter and map each record (bad records to the dead-letter table, or fail);</li>
 * <li>write every row, retrying until Cassandra acknowledged all of them;</li>
 * <li>write {@code commits/N}, then commit the consumer-group offsets (for lag tools), then
 *     publish progress, then purge old log entries.</li>
 * </ol>
 * A crash anywhere leaves either an open batch, replayed by step 1 with the same records and
 * the same write timestamps, or a committed one; either way the table ends the same.
 */
public final class MicroBatchEngine {

    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    /** How {@link #run()} ended. */
    public enum Outcome { COMPLETED, STOPPED, AT_BARRIER }

    /** What one call of {@link #runOnce()} did. */
    public enum StepResult { RAN_BATCH, IDLE }

    private final JobConfig config;
    private final Checkpoint checkpoint;
    private final RecordSource source;
    private final RecordTransformer transformer;
    private final RowSink sink;
    private final ProtocolHooks hooks;
    private boolean groupOffsetsResynced;
    private final ProgressTracker progress;
    private final BooleanSupplier stopRequested;
    private final LongSupplier clockMs;
    private final Epoch epoch;
    /** How the first batch starts, once decided ({@link #seed()}). */
    private Seed seed;
    private boolean seedDecided;
    private Map<String, Long> drainTargets;
    /** availableNow: the offsets of the last plan, capped to the drain targets. */
    private Map<String, KafkaOffsets> lastCapped;
    /** The checkpoint's counts since the job started, as of the last committed batch. */
    private RecordTotals totals;

    public MicroBatchEngine(JobConfig config, Checkpoint checkpoint, RecordSource source, RecordTransformer transformer,
            RowSink sink, ProtocolHooks hooks, ProgressTracker progress, BooleanSupplier stopRequested, LongSupplier clockMs) {
        this(config, checkpoint, source, transformer, sink, hooks, progress, stopRequested, clockMs, Epoch.FIRST);
    }

    /** The engine of one epoch of a rescalable job: seeded from its savepoint, sealed at its barrier. */
    public MicroBatchEngine(JobConfig config, Checkpoint checkpoint, RecordSource source, RecordTransformer transformer,
            RowSink sink, ProtocolHooks hooks, ProgressTracker progress, BooleanSupplier stopRequested, LongSupplier clockMs,
            Epoch epoch) {
        this.epoch = epoch;
        progress.epoch(epoch.number());
        this.config = config;
        this.checkpoint = checkpoint;
        this.source = source;
        this.transformer = transformer;
        this.sink = sink;
        this.hooks = hooks;
        this.progress = progress;
        this.stopRequested = stopRequested;
        this.clockMs = clockMs;
        this.totals = recoveredTotals(checkpoint, epoch.inherited());
        reportRecovered(checkpoint, progress);
        progress.totals(totals);
    }

    /**
     * The checkpoint's counts since the job started, as of its last commit: that commit's
     * totals; for a checkpoint whose commits predate totals, the sum of the commits it still
     * keeps (a lower bound); for one with no commit, what its epoch inherited.
     */
    static RecordTotals recoveredTotals(Checkpoint checkpoint, RecordTotals inherited) {
        Optional<BatchLog.Entry<BatchCommit>> last = checkpoint.commits().latest();
        if (last.isEmpty()) {
            return inherited == null ? RecordTotals.ZERO : inherited;
        }
        if (last.get().value().totals() != null) {
            return last.get().value().totals();
        }
        RecordTotals sum = RecordTotals.ZERO;
        for (long id : checkpoint.commits().batchIds()) {
            Optional<BatchCommit> c = checkpoint.commits().get(id);
            if (c.isPresent()) {
                sum = sum.plus(RecordTotals.of(c.get()));
            }
        }
        return sum;
    }

    /**
     * What the checkpoint says was committed (the last batch id and its ends), reported before
     * anything connects to Kafka or Cassandra, so that a worker that cannot connect still shows
     * where its job stands.
     */
    public static void reportRecovered(Checkpoint checkpoint, ProgressTracker progress) {
        checkpoint.commits().latest().ifPresent(c -> checkpoint.offsets().get(c.batchId())
                .ifPresent(o -> progress.recovered(c.batchId(), o.partitions())));
    }

    /** The same from a checkpoint read without its lock (while another process holds it). */
    public static void reportRecovered(CheckpointContents contents, ProgressTracker progress) {
        contents.latestCommit().ifPresent(c -> java.util.Optional.ofNullable(contents.offsets().get(c.batchId()))
                .ifPresent(o -> progress.recovered(c.batchId(), o.partitions())));
        contents.latestCommit().map(c -> c.value().totals()).ifPresent(progress::totals);
    }

    /**
     * Runs batches until asked to stop, or, with {@code trigger.availableNow}, until everything
     * that existed at the start is committed. Kafka being unreachable is waited out; a broken
     * checkpoint, a refused write or (in fail mode) a bad record ends it with an exception.
     */
    public Outcome run() {
        Optional<CheckpointSeal> sealed = checkpoint.seal();
        if (sealed.isPresent()) {
            progress.sealed(sealed.get());
            return Outcome.AT_BARRIER;
        }
        Backoff backoff = new Backoff(1_000, 5_000);
        String waitedFor = null;
        while (!stopRequested.getAsBoolean()) {
            long started = clockMs.getAsLong();
            StepResult result;
            try {
                if (epoch.ending() && !openBatch()) {
                    sealAtBarrier();
                    return Outcome.AT_BARRIER;
                }
                result = runOnce();
                backoff.reset();
                progress.errorPassed(waitedFor);
                waitedFor = null;
            } catch (StopRequestedException e) {
                break;
            } catch (SourceException | CheckpointUnavailableException e) {
                // Kafka unreachable, or a full or read-only volume: nothing of a batch is read
                // before its offsets are written, and the next plan reads the logs afresh.
                boolean source = e instanceof SourceException;
                if (source) {
                    progress.sourceAvailable(false);
                }
                progress.state(source ? EngineState.WAITING_FOR_SOURCE : EngineState.WAITING_FOR_CHECKPOINT);
                progress.error(e.getMessage());
                waitedFor = e.getMessage();
                long delayMs = backoff.next();
                LOG.log(Level.WARNING, (source ? "Kafka" : "the checkpoint") + " unavailable, retrying in " + delayMs + " ms: "
                        + e.getMessage() + (source ? " (no batch is planned meanwhile and nothing is lost; check the brokers and the"
                        + " network to them)" : " (no batch is planned meanwhile; free space on the volume or make it writable)"));
                pause(delayMs);
                continue;
            }
            if (result == StepResult.IDLE && config.trigger().availableNow()) {
                progress.state(EngineState.COMPLETED);
                return Outcome.COMPLETED;
            }
            // A trigger interval spaces batches (Spark's processing-time trigger); availableNow drains back to back.
            if (result == StepResult.IDLE || (config.trigger().intervalMs() > 0 && !config.trigger().availableNow())) {
                progress.state(EngineState.IDLE);
                pause(Math.max(config.trigger().intervalMs() - (clockMs.getAsLong() - started), result == StepResult.IDLE ? 100 : 0),
                        true);
            }
        }
        progress.state(EngineState.STOPPED);
        return Outcome.STOPPED;
    }

    /** Whether the newest batch of the offset log has no commit yet (it is replayed before anything else). */
    private boolean openBatch() {
        long planned = checkpoint.offsets().latest().map(BatchLog.Entry::batchId).orElse(-1L);
        long committed = checkpoint.commits().latest().map(BatchLog.Entry::batchId).orElse(-1L);
        return planned != committed;
    }

    /**
     * The barrier (docs/protocol.md §11): every batch is committed, so the checkpoint is sealed
     * with where each partition's chain stands, durably, before the worker reports it. No batch
     * is planned in this checkpoint again; the next epoch's owners go on from the seal.
     */
    private void sealAtBarrier() {
        int next = epoch.barrierRequested().getAsInt();
        Optional<BatchLog.Entry<BatchCommit>> last = checkpoint.commits().latest();
        CheckpointSeal seal;
        if (last.isEmpty()) {
            // Nothing committed in this epoch: where it was seeded is where its chains stand.
            Seed seeded = seed();
            seal = new CheckpointSeal(next, -1, seeded == null ? Map.of() : seeded.partitions(), clockMs.getAsLong(), totals);
        } else {
            long id = last.get().batchId();
            BatchOffsets offsets = checkpoint.offsets().get(id).orElseThrow(() -> new CheckpointException(
                    checkpoint.offsets().directory().resolve(Long.toString(id)), "missing, but batch " + id + " is committed"));
            seal = CheckpointSeal.of(next, id, offsets, last.get().value(), clockMs.getAsLong());
        }
        checkpoint.seal(seal);
        progress.sealed(seal);
        LOG.log(Level.INFO, "stopped at the barrier for epoch " + next + " after batch " + seal.batchId()
                + "; checkpoint sealed with " + seal.partitions());
    }

    /** Plans and runs at most one batch. */
    public StepResult runOnce() {
        progress.state(EngineState.PLANNING);
        long started = clockMs.getAsLong();
        if (drainedAlready()) {
            return StepResult.IDLE;
        }
        Map<String, KafkaOffsets> kafka = source.offsets();
        if (!groupOffsetsResynced) {
            resyncGroupOffsets();
        }
        if (config.trigger().availableNow()) {
            kafka = capToDrainTargets(kafka);
            lastCapped = kafka;
        }
        progress.planned(kafka);
        Plan plan = plan(kafka);
        long batchId;
        BatchOffsets offsets;
        boolean replay;
        if (plan instanceof Plan.Idle) {
            return StepResult.IDLE;
        } else if (plan instanceof Plan.Replay r) {
            batchId = r.batchId();
            offsets = r.offsets();
            replay = true;
            LOG.log(Level.INFO, "replaying open batch " + batchId + " with its recorded ranges " + offsets.partitions());
        } else {
            Plan.Next n = (Plan.Next) plan;
            batchId = n.batchId();
            offsets = n.offsets();
            replay = false;
            if (!checkpoint.offsets().add(batchId, offsets)) {
                throw new CheckpointException(checkpoint.offsets().directory().resolve(Long.toString(batchId)),
                        "already exists although the planner found no open batch");
            }
            if (offsets.lostRecords() > 0) {
                LOG.log(Level.WARNING, "batch " + batchId + " skips " + offsets.lostRecords()
                        + " records Kafka no longer has (failOnDataLoss: false)");
            }
        }
        long walDone = clockMs.getAsLong();
        progress.running(batchId, offsets.partitions());
        hooks.reached(ProtocolStep.AFTER_WAL, batchId);
        runBatch(batchId, offsets, replay, started, walDone);
        return StepResult.RAN_BATCH;
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
                source.commitGroupOffsets(ChainPoint.afterBatch(offsets.get(), last.get().value().lastTimestamps()));
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
    private Seed seed() {
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
                recorded = Optional.of(checkpoint.recover(new RecoveredChain(group, clockMs.getAsLong())));
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

    private void runBatch(long batchId, BatchOffsets offsets, boolean replay, long started, long walDone) {
        progress.state(EngineState.READING);
        Map<String, Long> chain = new TreeMap<>();
        offsets.partitions().forEach((p, r) -> chain.put(p, r.timestampBase()));
        List<RowSink.Write> writes = new ArrayList<>();
        long[] counts = new long[3]; // read, filtered, dead-lettered
        long half = Math.max(1, offsets.size() / 2);
        source.read(offsets.partitions(), record -> {
            long ts = WriteTimestamps.next(chain.get(record.partitionKey()), record.timestampMs());
            chain.put(record.partitionKey(), ts);
            if (record.value() == null) {
                tombstone(batchId, record, ts, writes, counts);
            } else {
                transform(batchId, record, ts, writes, counts);
            }
            if (++counts[0] == half) {
                hooks.reached(ProtocolStep.MID_READ, batchId);
            }
        });
        long readDone = clockMs.getAsLong();
        write(batchId, offsets, replay, started, walDone, readDone, writes, counts, chain);
    }

    private void transform(long batchId, SourceRecord record, long ts, List<RowSink.Write> writes, long[] counts) {
        TransformResult result = transformer.apply(record);
        if (result instanceof TransformResult.Row row) {
            try {
                writes.add(sink.prepare(record, row.columns(), ts));
            } catch (BadRowException e) {
                writes.add(badRecord(batchId, record, e.getMessage(), ts));
                counts[2]++;
            }
        } else if (result instanceof TransformResult.Bad bad) {
            writes.add(badRecord(batchId, record, bad.reason(), ts));
            counts[2]++;
        } else {
            counts[1]++;
        }
    }

    /**
     * A record with a null value, as {@code tombstones} says: counted as filtered out, a delete
     * of the row its key columns map to (with the record's write timestamp), or a bad record.
     */
    private void tombstone(long batchId, SourceRecord record, long ts, List<RowSink.Write> writes, long[] counts) {
        switch (config.tombstones()) {
            case IGNORE -> counts[1]++;
            case DEAD_LETTER -> {
                writes.add(badRecord(batchId, record, "a tombstone (null value), and the job says tombstones: deadLetter", ts));
                counts[2]++;
            }
            case DELETE -> {
                TransformResult key = transformer.keyOf(record, sink.primaryKeyColumns());
                try {
                    if (key instanceof TransformResult.Row row) {
                        writes.add(sink.prepareDelete(record, row.columns(), ts));
                        return;
                    }
                    writes.add(badRecord(batchId, record, ((TransformResult.Bad) key).reason(), ts));
                } catch (BadRowException e) {
                    writes.add(badRecord(batchId, record, "tombstone: " + e.getMessage(), ts));
                }
                counts[2]++;
            }
        }
    }

    private void write(long batchId, BatchOffsets offsets, boolean replay, long started, long walDone, long readDone,
            List<RowSink.Write> writes, long[] counts, Map<String, Long> chain) {
        progress.state(EngineState.WRITING);
        AtomicLong acknowledged = new AtomicLong();
        long halfWrites = Math.max(1, writes.size() / 2);
        RowSink.SinkListener listener = new RowSink.SinkListener() {
            /** The error this batch's writes reported, cleared once Cassandra acknowledges them again. */
            private volatile String sinkError;

            @Override
            public void waitingForSink(Throwable cause, int pendingWrites) {
                sinkError = "Cassandra: " + cause.getMessage();
                progress.sinkAvailable(false);
                progress.state(EngineState.WAITING_FOR_SINK);
                progress.error(sinkError);
                LOG.log(Level.WARNING, "batch " + batchId + ": " + pendingWrites
                        + " writes failed, retrying until Cassandra acknowledges them (nothing is committed meanwhile; the lag"
                        + " grows; check the Cassandra nodes and the network to them): " + cause.getMessage());
            }

            @Override
            public void sinkAvailable() {
                progress.sinkAvailable(true);
                progress.state(EngineState.WRITING);
                progress.errorPassed(sinkError);
            }

            @Override
            public void acknowledged(int count) {
                long before = acknowledged.getAndAdd(count);
                if (before < halfWrites && before + count >= halfWrites) {
                    hooks.reached(ProtocolStep.MID_WRITE, batchId);
                }
            }
        };
        counts[2] += deadLetterRefused(batchId, sink.writeAll(writes, listener), listener);
        progress.sinkAvailable(true);
        long writeDone = clockMs.getAsLong();
        hooks.reached(ProtocolStep.AFTER_SINK, batchId);

        progress.state(EngineState.COMMITTING);
        long rowsWritten = writes.size() - counts[2];
        RecordTotals after = totals.plus(new RecordTotals(counts[0], counts[1], rowsWritten, counts[2]));
        BatchCommit commit = new BatchCommit(counts[0], counts[1], rowsWritten, counts[2], writeDone - started, chain,
                clockMs.getAsLong(), after);
        commitDurably(batchId, commit);
        totals = after;
        hooks.reached(ProtocolStep.AFTER_COMMIT_LOG, batchId);
        try {
            source.commitGroupOffsets(ChainPoint.afterBatch(offsets, chain));
        } catch (SourceException e) {
            // The commit log is the truth: the group is for lag tools, and a lost volume's last
            // resort. The next batch commits again.
            progress.error(e.getMessage());
            LOG.log(Level.WARNING, e.getMessage());
        }
        long committed = clockMs.getAsLong();
        Map<String, Long> durations = new LinkedHashMap<>();
        durations.put("planning", walDone - started);
        durations.put("reading", readDone - walDone);
        durations.put("writing", writeDone - readDone);
        durations.put("committing", committed - writeDone);
        durations.put("total", committed - started);
        double seconds = Math.max(1, committed - started) / 1000.0;
        progress.committed(new Progress.BatchFigures(batchId, replay, counts[0], counts[1], rowsWritten, counts[2], durations,
                counts[0] / seconds, rowsWritten / seconds), offsets.partitions(), offsets.lostRecords());
        checkpoint.purge(config.checkpoint().retainBatches());
        LOG.log(Level.INFO, "batch " + batchId + (replay ? " (replayed)" : "") + " committed: read " + counts[0]
                + ", filtered out " + counts[1] + ", written " + rowsWritten + ", dead-lettered " + counts[2]
                + " in " + (committed - started) + " ms " + durations);
    }

    /**
     * Writes {@code commits/N}. A volume that is full or read-only now is waited out here, with
     * back-off, instead of in {@link #run()}: every row of the batch is acknowledged, so only the
     * commit is missing, and replaying the whole batch on each try would rewrite it for nothing.
     * An attempt that failed after linking the file leaves it in place: the next finds it there,
     * which is this batch's own commit.
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
                pause(delayMs);
                if (stopRequested.getAsBoolean()) {
                    throw new StopRequestedException(); // the batch stays open and is replayed: safe
                }
            }
        }
    }

    /**
     * Rows Cassandra refused even alone (over its mutation size limit, say) are bad records like
     * any other: dead-lettered, with the same write timestamp, so that a replay that meets the
     * same refusal writes the same dead letter; or, in fail mode, the job stops with the record
     * named. Returns how many rows became dead letters.
     */
    private long deadLetterRefused(long batchId, List<RowSink.Refused> refused, RowSink.SinkListener listener) {
        if (refused.isEmpty()) {
            return 0;
        }
        List<RowSink.Write> letters = new ArrayList<>(refused.size());
        for (RowSink.Refused r : refused) {
            if (r.deadLetter()) {
                throw new SinkException("the dead letter of record " + r.record().partitionKey() + " offset "
                        + r.record().offset() + " was refused: " + r.reason(), null);
            }
            LOG.log(Level.WARNING, "batch " + batchId + ": record " + r.record().partitionKey() + " offset "
                    + r.record().offset() + " is a bad record, written to the dead-letter table with its raw value: " + r.reason());
            letters.add(badRecord(batchId, r.record(), r.reason(), r.timestampMicros()));
        }
        List<RowSink.Refused> again = sink.writeAll(letters, listener);
        if (!again.isEmpty()) {
            RowSink.Refused r = again.get(0);
            throw new SinkException("the dead letter of record " + r.record().partitionKey() + " offset "
                    + r.record().offset() + " was refused: " + r.reason(), null);
        }
        return refused.size();
    }

    private RowSink.Write badRecord(long batchId, SourceRecord record, String reason, long ts) {
        String where = record.partitionKey() + " offset " + record.offset();
        if (config.deadLetter().mode() == DeadLetterMode.FAIL) {
            throw new BadRecordException("bad record at " + where + ": " + reason + " (key " + length(record.key())
                    + " bytes, value " + length(record.value()) + " bytes; set deadLetter.mode: table to keep going and"
                    + " keep such records)");
        }
        return sink.prepareDeadLetter(record, reason, batchId, ts);
    }

    private static String length(byte[] bytes) {
        return bytes == null ? "null" : Integer.toString(bytes.length);
    }

    private Plan plan(Map<String, KafkaOffsets> kafka) {
        return BatchPlanner.plan(new BatchPlanner.Input(checkpoint.offsets().latest(), checkpoint.commits().latest(),
                kafka, config.source().startingOffsets(), config.source().maxRecordsPerBatch(),
                config.source().failOnDataLoss(), clockMs.getAsLong(), seed()));
    }

    /**
     * availableNow: whether the committed batches already reach every drain target, planned with
     * the last plan's offsets instead of asking Kafka again. The targets are last stable offsets
     * Kafka had reached when the run started, and a partition's last stable offset only grows,
     * so capped to the targets fresh latest offsets equal the last plan's: where those leave
     * nothing to read, fresh ones would not either. Asking would not be free: after the last
     * batch the consumer's fetch at the end of the topic waits on the broker for up to
     * {@code fetch.max.wait.ms} (10 ms by the worker's default, more if the job sets it), and
     * the offsets request queues behind it.
     */
    private boolean drainedAlready() {
        return config.trigger().availableNow() && lastCapped != null && groupOffsetsResynced && plan(lastCapped) instanceof Plan.Idle;
    }

    /** availableNow: the latest offsets seen first are where draining stops. */
    private Map<String, KafkaOffsets> capToDrainTargets(Map<String, KafkaOffsets> kafka) {
        if (drainTargets == null) {
            drainTargets = new HashMap<>();
            kafka.forEach((p, o) -> drainTargets.put(p, o.latest()));
        }
        Map<String, KafkaOffsets> capped = new TreeMap<>();
        kafka.forEach((p, o) -> capped.put(p, new KafkaOffsets(o.earliest(),
                Math.max(o.earliest(), Math.min(o.latest(), drainTargets.getOrDefault(p, o.earliest()))))));
        return capped;
    }

    private void pause(long ms) {
        pause(ms, false);
    }

    /** Sleeps {@code ms}, less if asked to stop, or, with {@code untilBarrier}, to stop at a barrier. */
    private void pause(long ms, boolean untilBarrier) {
        long until = clockMs.getAsLong() + ms;
        while (!stopRequested.getAsBoolean() && !(untilBarrier && epoch.ending()) && clockMs.getAsLong() < until) {
            try {
                Thread.sleep(Math.min(50, Math.max(1, until - clockMs.getAsLong())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
