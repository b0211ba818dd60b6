package io.oncestream.engine;

import io.oncestream.contract.RecordTotals;

/** What became of one batch's records, counted while it runs: read, filtered out, dead-lettered, written. */
final class BatchCounts {

    private long read;
    private long filteredOut;
    private long deadLettered;
    private long written;
    private long bytesRead;

    /** One more record read; returns how many now. */
    long recordRead() {
        return ++read;
    }

    /** The key and value of a record read (either may be null). */
    void bytesRead(byte[] key, byte[] value) {
        bytesRead += (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
    }

    /** The bytes of the keys and values read. */
    long bytesRead() {
        return bytesRead;
    }

    /** Counts where {@link RecordDispatch} sent a record: nowhere (filtered out), or to the dead-letter table. */
    void routed(RecordDispatch.Routed routed) {
        if (routed.filteredOut()) {
            filteredOut++;
        } else if (routed.deadLetter()) {
            deadLettered++;
        }
    }

    /** Rows Cassandra refused even alone, written as dead letters instead. */
    void deadLettered(long count) {
        deadLettered += count;
    }

    /** The batch's writes are acknowledged: those that are not dead letters are its rows. */
    void writesAcknowledged(long writes) {
        written = writes - deadLettered;
    }

    long read() {
        return read;
    }

    long filteredOut() {
        return filteredOut;
    }

    long deadLettered() {
        return deadLettered;
    }

    long written() {
        return written;
    }

    RecordTotals totals() {
        return new RecordTotals(read, filteredOut, written, deadLettered);
    }
}
