package io.oncestream.engine;

import java.util.function.IntSupplier;

import io.oncestream.contract.RecordTotals;
import io.oncestream.engine.plan.Seed;

/**
 * The epoch a worker runs in (docs/protocol.md §11) and how it learns that the epoch ends.
 *
 * @param number           0 for a job's first shape, one more after each rescale
 * @param seed             how the checkpoint's first batch starts, for an epoch seeded from a savepoint; null for epoch 0
 * @param barrierRequested the epoch a barrier was requested for (0 while none was): once above
 *                         {@code number}, the engine stops at its next batch boundary and seals its checkpoint
 * @param inherited        the job's counts when the epoch started, which this worker carries on
 *                         (worker 0 of an epoch after a rescale), or null
 */
public record Epoch(int number, Seed seed, IntSupplier barrierRequested, RecordTotals inherited) {

    public Epoch(int number, Seed seed, IntSupplier barrierRequested) {
        this(number, seed, barrierRequested, null);
    }

    /** A job's first epoch, without barriers: how tests and the benchmark run the engine. */
    public static final Epoch FIRST = new Epoch(0, null, () -> 0);

    /** Whether a barrier for a later epoch was requested. */
    public boolean ending() {
        return barrierRequested.getAsInt() > number;
    }
}
