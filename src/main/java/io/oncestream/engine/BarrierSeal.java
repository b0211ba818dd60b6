package io.oncestream.engine;

import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.RecordTotals;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.plan.Seed;

/**
 * The barrier of a rescale (docs/protocol.md §11): once a later epoch is asked for and every
 * batch is committed, the checkpoint is sealed with where each partition's chain stands,
 * durably, before the worker reports it. No batch is planned in a sealed checkpoint again; the
 * next epoch's owners go on from the seal.
 */
final class BarrierSeal {

    /** The engine's log lines carry one name, whichever of its classes writes them. */
    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    private final Checkpoint checkpoint;
    private final Epoch epoch;
    private final ProgressTracker progress;
    private final LongSupplier clockMs;

    BarrierSeal(Checkpoint checkpoint, Epoch epoch, ProgressTracker progress, LongSupplier clockMs) {
        this.checkpoint = checkpoint;
        this.epoch = epoch;
        this.progress = progress;
        this.clockMs = clockMs;
    }

    /** Whether the checkpoint was sealed already (by this worker before a restart); reports the seal if so. */
    boolean sealedBefore() {
        Optional<CheckpointSeal> sealed = checkpoint.seal();
        sealed.ifPresent(progress::sealed);
        return sealed.isPresent();
    }

    /** Whether a barrier for a later epoch was asked for and no batch is open (an open one is replayed first). */
    boolean due() {
        return epoch.ending() && !openBatch();
    }

    private boolean openBatch() {
        long planned = checkpoint.offsets().latest().map(BatchLog.Entry::batchId).orElse(-1L);
        long committed = checkpoint.commits().latest().map(BatchLog.Entry::batchId).orElse(-1L);
        return planned != committed;
    }

    /**
     * Seals the checkpoint after its last committed batch, or, with none committed in this
     * epoch, where it was seeded ({@code seeded}, asked only then).
     */
    void seal(Supplier<Seed> seeded, RecordTotals totals) {
        int next = epoch.barrierRequested().getAsInt();
        Optional<BatchLog.Entry<BatchCommit>> last = checkpoint.commits().latest();
        CheckpointSeal seal;
        if (last.isEmpty()) {
            // Nothing committed in this epoch: where it was seeded is where its chains stand.
            Seed seed = seeded.get();
            seal = new CheckpointSeal(next, -1, seed == null ? Map.of() : seed.partitions(), clockMs.getAsLong(), totals);
        } else {
            long id = last.get().batchId();
            BatchOffsets offsets = checkpoint.offsets().get(id).orElseThrow(() -> new CheckpointException(
                    checkpoint.offsets().directory().resolve(Long.toString(id)), "missing, but batch " + id + " is committed"));
            seal = last.get().value().seal(next, id, offsets, clockMs.getAsLong());
        }
        checkpoint.seal(seal);
        progress.sealed(seal);
        LOG.log(Level.INFO, "stopped at the barrier for epoch " + next + " after batch " + seal.batchId()
                + "; checkpoint sealed with " + seal.partitions());
    }
}
