package io.oncestream.engine;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A per-second rate of a growing count over the last {@code window} of wall-clock time: the
 * count's growth since the newest sample at least a window old (or the oldest sample, while the
 * count is younger than a window) divided by the time between. A count that stops growing
 * drops to 0 within a window, whether or not anything else happens.
 */
public final class RateWindow {

    private final long windowMs;
    /** {time ms, count}, oldest first. */
    private final Deque<long[]> samples = new ArrayDeque<>();

    public RateWindow(long windowMs) {
        this.windowMs = windowMs;
    }

    public long windowMs() {
        return windowMs;
    }

    /** Records the count at {@code nowMs}; older samples than one window before it are dropped but the newest of them. */
    public synchronized void sample(long nowMs, long count) {
        if (!samples.isEmpty() && samples.peekLast()[0] >= nowMs) {
            samples.peekLast()[1] = count;
        } else {
            samples.addLast(new long[] {nowMs, count});
        }
        while (samples.size() > 1) {
            long[] first = samples.pollFirst();
            if (samples.peekFirst()[0] > nowMs - windowMs) {
                samples.addFirst(first);
                break;
            }
        }
    }

    /** The rate at {@code nowMs} for a count of {@code count} then; null before a second has passed since the first sample. */
    public synchronized Double perSecond(long nowMs, long count) {
        long[] base = null;
        for (long[] s : samples) {
            if (base == null || s[0] <= nowMs - windowMs) {
                base = s;
            }
        }
        if (base == null || nowMs - base[0] < 1000) {
            return null;
        }
        return Math.max(0, count - base[1]) * 1000.0 / (nowMs - base[0]);
    }
}
