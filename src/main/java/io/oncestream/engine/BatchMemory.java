package io.oncestream.engine;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * How many records a new batch may hold so that it fits the worker's heap. A batch's records and
 * their writes are all in memory from its read until Cassandra acknowledged the last write: at
 * the default {@code maxRecordsPerBatch} of 50,000 small records that was 68-83 MiB live
 * (docs/benchmarks.md, "Worker memory"), which a worker in a 256 MiB pod, catching up a backlog,
 * cannot hold. So a new batch is capped at {@link #BUDGET_SHARE} of the heap, estimating each
 * record's memory from the bytes of the last batch's records; {@code maxRecordsPerBatch} still
 * caps it too. A replay reads its recorded ranges, whatever the cap is now.
 * <p>
 * The estimate: {@link #PER_RECORD} bytes of objects per record (the consumer's record, the
 * engine's, the mapped columns and the bound statement: 1.4-1.7 KB for the benchmark's
 * 150-byte orders) plus {@link #PER_BYTE} times its key and value (the bytes themselves, the
 * decoded values and the bound values). Before any batch was read, records are taken to be
 * {@link #ASSUMED_RECORD_BYTES} bytes, so a first batch may be smaller than the next, which follow
 * the data. A batch's writes are flushed a 32nd of the heap at a time while it is read
 * ({@link #flushBytes()}, {@link HeldWrites}), so that its records die young, and so that a batch
 * far larger than its plan (a first batch of large records, records that grew, a replay planned
 * under a larger heap) never holds more than that.
 */
public final class BatchMemory {

    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    /** The share of the heap one batch's records and writes may take: one eighth (and a fetch another, KafkaRecordSource). */
    public static final int BUDGET_SHARE = 8;
    /**
     * A batch's writes are flushed while it is read, each time they reach a quarter of its budget.
     * Held to the end of the read, a batch's records outlived several young collections, were
     * promoted, and filled the old generation: at full speed in a 256 MiB pod 7.0-8.1 % of the
     * time went to GC (9.9-14.8 % with the consumer's polls not yet sized to the heap), a third
     * of it in full collections; flushed so, 2.6-3.0 % at the same rate (docs/benchmarks.md).
     */
    static final int FLUSHES_PER_BUDGET = 4;
    static final long PER_RECORD = 1024;
    static final long PER_BYTE = 3;
    static final long ASSUMED_RECORD_BYTES = 1024;

    private final long budget;
    private long bytesPerRecord = ASSUMED_RECORD_BYTES;
    private boolean measured;
    private boolean capReported;

    /** For a heap of at most {@code maxHeapBytes} ({@link Runtime#maxMemory()}). */
    BatchMemory(long maxHeapBytes) {
        this.budget = maxHeapBytes / BUDGET_SHARE;
    }

    /** The worker's own heap. */
    static BatchMemory ofThisJvm() {
        return new BatchMemory(Runtime.getRuntime().maxMemory());
    }

    /** The memory a record of {@code keyAndValueBytes} takes from its read until its write is acknowledged (estimated). */
    static long recordBytes(long keyAndValueBytes) {
        return PER_RECORD + PER_BYTE * keyAndValueBytes;
    }

    /**
     * What a batch's writes may hold before they are flushed while it is still read
     * ({@link HeldWrites}): a quarter of the budget, a 32nd of the heap.
     */
    long flushBytes() {
        return budget / FLUSHES_PER_BUDGET;
    }

    /** The most records a new batch may hold: {@code configured} (what the interval leaves of maxRecordsPerBatch), or fewer if they would not fit; at least 1. */
    long maxRecords(long configured) {
        long fit = Math.max(1, budget / recordBytes(bytesPerRecord));
        if (fit >= configured) {
            return configured;
        }
        if (measured && !capReported) {
            capReported = true;
            LOG.log(Level.INFO, "batches hold at most " + fit + " records so that a batch fits in " + (budget >> 20)
                    + " MiB, an eighth of the heap; records average " + bytesPerRecord + " bytes (a trigger interval's"
                    + " batches follow one another at once up to maxRecordsPerBatch; a larger memory limit allows larger batches)");
        }
        return fit;
    }

    /** A batch read {@code records} records of {@code bytes} bytes of keys and values in all. */
    void read(long records, long bytes) {
        if (records > 0) {
            bytesPerRecord = bytes / records;
            measured = true;
        }
    }

    long bytesPerRecord() {
        return bytesPerRecord;
    }
}
