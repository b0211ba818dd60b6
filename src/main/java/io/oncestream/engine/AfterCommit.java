package io.oncestream.engine;

import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.Progress;
import io.oncestream.engine.checkpoint.Checkpoint;

/**
 * What follows a batch's commit, outside the protocol: its figures to the progress (and so to
 * {@code /progress} and {@code /metrics}), its log line, and the purge of log entries older
 * than {@code checkpoint.retainBatches}.
 */
final class AfterCommit {

    /** The engine's log lines carry one name, whichever of its classes writes them. */
    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    private final Checkpoint checkpoint;
    private final ProgressTracker progress;
    private final int retainBatches;

    AfterCommit(Checkpoint checkpoint, ProgressTracker progress, int retainBatches) {
        this.checkpoint = checkpoint;
        this.progress = progress;
        this.retainBatches = retainBatches;
    }

    void committed(PlannedBatch batch, BatchCounts counts, BatchTimings timings) {
        Map<String, Long> durations = timings.durations();
        double seconds = Math.max(1, timings.totalMs()) / 1000.0;
        progress.committed(new Progress.BatchFigures(batch.id(), batch.replay(), counts.read(), counts.filteredOut(),
                counts.written(), counts.deadLettered(), durations, counts.read() / seconds, counts.written() / seconds),
                batch.offsets().partitions(), batch.offsets().lostRecords());
        checkpoint.purge(retainBatches);
        LOG.log(Level.INFO, "batch " + batch.id() + (batch.replay() ? " (replayed)" : "") + " committed: read " + counts.read()
                + ", filtered out " + counts.filteredOut() + ", written " + counts.written() + ", dead-lettered "
                + counts.deadLettered() + " in " + timings.totalMs() + " ms " + durations);
    }
}
