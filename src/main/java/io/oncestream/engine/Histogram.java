package io.oncestream.engine;

/**
 * A Prometheus-style histogram of durations in seconds: cumulative counts per upper bound, the
 * sum and the count. Thread-safe.
 */
public final class Histogram {

    /** Bounds for batch and write durations: from a fast batch to a long outage's retried one. */
    public static final double[] BATCH_SECONDS = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

    /** What a scrape renders: {@code cumulative[i]} observations at most {@code bounds[i]}. */
    public record Snapshot(double[] bounds, long[] cumulative, double sum, long count) {
    }

    private final double[] bounds;
    private final long[] counts;
    private double sum;
    private long count;

    public Histogram(double[] bounds) {
        this.bounds = bounds.clone();
        this.counts = new long[bounds.length];
    }

    public synchronized void observe(double seconds) {
        for (int i = 0; i < bounds.length; i++) {
            if (seconds <= bounds[i]) {
                counts[i]++;
                break;
            }
        }
        sum += seconds;
        count++;
    }

    public synchronized Snapshot snapshot() {
        long[] cumulative = new long[bounds.length];
        long running = 0;
        for (int i = 0; i < bounds.length; i++) {
            running += counts[i];
            cumulative[i] = running;
        }
        return new Snapshot(bounds.clone(), cumulative, sum, count);
    }
}
