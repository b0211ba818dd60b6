package io.oncestream.engine;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/** Waiting between retries in a way a stop request cuts short. */
public final class Pause {

    private Pause() {
    }

    /**
     * Sleeps {@code ms}, looking at {@code stopRequested} at least every 100 ms.
     *
     * @throws StopRequestedException as soon as a stop is requested, or the thread is interrupted
     */
    public static void sleep(long ms, BooleanSupplier stopRequested) {
        long until = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < until) {
            if (stopRequested.getAsBoolean()) {
                throw new StopRequestedException();
            }
            try {
                Thread.sleep(Math.min(100, Math.max(1, until - System.currentTimeMillis())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StopRequestedException();
            }
        }
        if (stopRequested.getAsBoolean()) {
            throw new StopRequestedException();
        }
    }

    /**
     * Sleeps {@code ms} by {@code clockMs}, in steps of at most 50 ms, less if {@code cutShort}
     * becomes true; returns either way, and at once on an interrupt (keeping the flag). The
     * engine waits so: its clock is the one tests set, and it decides itself what a stop means.
     */
    static void upTo(long ms, LongSupplier clockMs, BooleanSupplier cutShort) {
        long until = clockMs.getAsLong() + ms;
        while (!cutShort.getAsBoolean() && clockMs.getAsLong() < until) {
            try {
                Thread.sleep(Math.min(50, Math.max(1, until - clockMs.getAsLong())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
