package io.oncestream.engine;

import java.util.function.BooleanSupplier;

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
}
