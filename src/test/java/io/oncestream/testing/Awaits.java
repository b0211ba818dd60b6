package io.oncestream.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition in tests: polls, and fails with what was awaited when time is up. */
public final class Awaits {

    private Awaits() {
    }

    /** Polls {@code condition} every 100 ms until it holds; throws {@link AssertionError} after {@code timeout}. */
    public static void until(Duration timeout, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            }
        }
    }
}
