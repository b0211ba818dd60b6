package io.oncestream.engine;

/**
 * One interval of a processing-time trigger: when it began and the records its batches read. A
 * batch normally fills an interval, and the next waits for the next interval. A batch that
 * {@link BatchMemory} cut short to fit the heap, with records beyond it waiting, is only a part
 * of the interval's: the next part follows at once, until the interval read
 * {@code maxRecordsPerBatch}, so that a small heap costs batches, not throughput.
 */
final class TriggerInterval {

    private final long intervalMs;
    private final long maxRecords;
    private long startedMs = -1;
    private long records;

    TriggerInterval(long intervalMs, long maxRecords) {
        this.intervalMs = intervalMs;
        this.maxRecords = maxRecords;
    }

    /** A batch is about to be planned at {@code nowMs}: the interval begins with it unless one is under way. */
    void batchStarting(long nowMs) {
        if (startedMs < 0) {
            startedMs = nowMs;
            records = 0;
        }
    }

    /** A batch of {@code batchRecords} ran; returns whether the next follows at once, as a part of this interval. */
    boolean nextPartAtOnce(long batchRecords, boolean cutByMemory) {
        records += batchRecords;
        return cutByMemory && records < maxRecords;
    }

    /** The most records the next batch of the interval may hold: what maxRecordsPerBatch leaves of it. */
    long recordsLeft() {
        return Math.max(1, maxRecords - records);
    }

    /** How long until the interval ends, at {@code nowMs} (0 or less: it has). */
    long untilNextMs(long nowMs) {
        return intervalMs - (nowMs - startedMs);
    }

    /** The interval is over (waited out, or given up after a failure): the next batch begins another. */
    void end() {
        startedMs = -1;
    }
}
