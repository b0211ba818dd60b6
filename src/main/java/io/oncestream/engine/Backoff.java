package io.oncestream.engine;

/**
 * The pauses between tries of something that may pass by itself: the first pause, then twice
 * the one before, up to a cap. The engine's planning and its {@code commits/N} (1 s to 5 s),
 * the sink's writes (0.2 s to 5 s) and the sink's first connection (1 s to 5 s) wait so, and so
 * does the worker: for its checkpoint's lock (0.1 s to 2 s) and volume (1 s to 5 s), and between
 * starts of its engine (1 s to 30 s after a transient failure; with {@code restart.onFailure:
 * Backoff}, 10 s to {@code restart.maxBackoffMs}), as docs/worker.md's <i>Failures</i> table
 * says. The pauses are exact (no jitter), so that table holds to the millisecond.
 * <p>
 * Only the lengths are computed here; each caller waits in its own stop-aware way
 * ({@link Pause}, or the engine's clock), so a stop request cuts any pause short.
 */
public final class Backoff {

    private final long firstMs;
    private final long maxMs;
    private long nextMs;

    /**
     * @param firstMs the first pause, above 0
     * @param maxMs the longest pause, at least {@code firstMs}
     */
    public Backoff(long firstMs, long maxMs) {
        if (firstMs <= 0 || maxMs < firstMs) {
            throw new IllegalArgumentException("a back-off needs 0 < first <= max, not first " + firstMs + " ms and max "
                    + maxMs + " ms");
        }
        this.firstMs = firstMs;
        this.maxMs = maxMs;
        this.nextMs = firstMs;
    }

    /** The pause to take now; the call after it returns twice as much, up to the cap. */
    public long next() {
        long pause = nextMs;
        nextMs = nextMs > maxMs / 2 ? maxMs : nextMs * 2;
        return pause;
    }

    /** After a success: the next pause is the first one again. */
    public void reset() {
        nextMs = firstMs;
    }
}
