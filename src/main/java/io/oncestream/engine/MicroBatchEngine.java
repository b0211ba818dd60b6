package io.oncestream.engine;

import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.RecordTotals;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointContents;
import io.oncestream.engine.checkpoint.CheckpointUnavailableException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.plan.KafkaOffsets;

/**
 * The micro-batch loop: runs {@link BatchProtocol}, the exactly-once protocol, one batch after
 * the other until asked to stop. Around it: the trigger (an interval between batches, or
 * {@code availableNow}: {@link Drain} until everything that existed at the start is committed),
 * Kafka or the checkpoint volume being unavailable (waited out with {@link Backoff}), and a
 * rescale's barrier ({@link BarrierSeal}).
 */
public final class MicroBatchEngine {

    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    /** How {@link #run()} ended. */
    public enum Outcome { COMPLETED, STOPPED, AT_BARRIER }

    /** What one step of the loop did. */
    private enum StepResult { RAN_BATCH, IDLE }

    private final JobConfig config;
    private final ProgressTracker progress;
    private final BooleanSupplier stopRequested;
    private final LongSupplier clockMs;
    private final Epoch epoch;
    private final BatchProtocol protocol;
    private final BarrierSeal barrier;
    /** availableNow's end; null for a job that runs until it is stopped. */
    private final Drain drain;

    public MicroBatchEngine(JobConfig config, Checkpoint checkpoint, Pipeline pipeline, Controls controls) {
        this(config, checkpoint, pipeline, controls, Epoch.FIRST);
    }

    /** The engine of one epoch of a rescalable job: seeded from its savepoint, sealed at its barrier. */
    public MicroBatchEngine(JobConfig config, Checkpoint checkpoint, Pipeline pipeline, Controls controls, Epoch epoch) {
        this.epoch = epoch;
        this.progress = controls.progress();
        progress.epoch(epoch.number());
        this.config = config;
        this.stopRequested = controls.stopRequested();
        this.clockMs = controls.clockMs();
        RecordTotals totals = recoveredTotals(checkpoint, epoch.inherited());
        reportRecovered(checkpoint, progress);
        progress.totals(totals);
        this.protocol = new BatchProtocol(config, checkpoint, pipeline, controls, epoch, totals);
        this.barrier = new BarrierSeal(checkpoint, epoch, progress, clockMs);
        this.drain = config.trigger().availableNow() ? new Drain() : null;
    }

    /** Sizes batches for a heap of {@code maxHeapBytes} instead of this JVM's (tests); before {@link #run()}. */
    MicroBatchEngine heapForBatches(long maxHeapBytes) {
        protocol.memory(new BatchMemory(maxHeapBytes));
        return this;
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
                sum = sum.plus(c.get().counts());
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
        if (barrier.sealedBefore()) {
            return Outcome.AT_BARRIER;
        }
        Backoff backoff = new Backoff(1_000, 5_000);
        String waitedFor = null;
        TriggerInterval interval = new TriggerInterval(config.trigger().intervalMs(), config.source().maxRecordsPerBatch());
        while (!stopRequested.getAsBoolean()) {
            interval.batchStarting(clockMs.getAsLong());
            StepResult result;
            try {
                if (barrier.due()) {
                    barrier.seal(protocol::seed, protocol.totals());
                    return Outcome.AT_BARRIER;
                }
                result = runOnce(interval.recordsLeft());
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
                Pause.upTo(delayMs, clockMs, stopRequested);
                interval.end();
                continue;
            }
            if (result == StepResult.IDLE && config.trigger().availableNow()) {
                progress.state(EngineState.COMPLETED);
                return Outcome.COMPLETED;
            }
            // A trigger interval spaces batches (Spark's processing-time trigger); availableNow drains back to back.
            if (result == StepResult.IDLE || (config.trigger().intervalMs() > 0 && !config.trigger().availableNow())) {
                if (result == StepResult.RAN_BATCH
                        && interval.nextPartAtOnce(protocol.lastBatchRecords(), protocol.lastBatchCutByMemory())) {
                    continue;
                }
                progress.state(EngineState.IDLE);
                long untilNextMs = interval.untilNextMs(clockMs.getAsLong());
                // Cut short by a stop, and by a barrier, at which the worker stops as soon as it can.
                Pause.upTo(Math.max(untilNextMs, result == StepResult.IDLE ? 100 : 0), clockMs,
                        () -> stopRequested.getAsBoolean() || epoch.ending());
            }
            interval.end();
        }
        progress.state(EngineState.STOPPED);
        return Outcome.STOPPED;
    }

    /** Plans and runs at most one batch, of at most {@code maxRecords} records. */
    private StepResult runOnce(long maxRecords) {
        progress.state(EngineState.PLANNING);
        long started = clockMs.getAsLong();
        if (drain != null && drain.reached(protocol)) {
            return StepResult.IDLE;
        }
        Map<String, KafkaOffsets> kafka = protocol.latestOffsets();
        if (drain != null) {
            kafka = drain.cap(kafka);
        }
        return protocol.runBatch(kafka, started, maxRecords) ? StepResult.RAN_BATCH : StepResult.IDLE;
    }
}
