package io.oncestream.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition in tests: polls, and fails with what was awaited when time is up. */
public final class Awaits {

    private Awaits() {
    }

    /** Polls {@code condition} every 100 ms until it holds; throws {@link AssertionError} after {@code timeout}. */
    public static void until(Duration timeout, String what, BooleanSupplier condition) {
        try {
            if (!within(timeout, Duration.ofMillis(100), condition)) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, e);
        }
    }

    /**
     * Polls {@code condition} every {@code every} until it holds or {@code timeout} has passed;
     * returns whether it held. For callers that fail in their own words, or go on either way.
     */
    public static boolean within(Duration timeout, Duration every, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(every.toMillis()); // the poll interval of this wait
        }
        return true;
    }
}
