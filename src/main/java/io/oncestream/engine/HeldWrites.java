package io.oncestream.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The writes of a batch between their read and their send. Normally a batch's writes are all
 * sent once its read ended ({@link BatchProtocol}, step 4): {@link BatchMemory} planned the batch
 * to fit an eighth of the heap. But that plan rests on the last batch's record sizes, and on
 * records of 1 KiB before any batch was read, and a replay reads the ranges its write-ahead entry
 * recorded, whatever the heap is now: a topic of larger records, records that grew, or a restart
 * in a smaller pod can bring a batch far larger than its plan. Then, as soon as the writes held
 * are estimated at {@code limitBytes}, they are sent, and the read goes on once Cassandra
 * acknowledged them. That is safe (docs/protocol.md §5): every write carries its record's
 * timestamp whenever it is sent, and the commit still follows the last acknowledgment.
 */
final class HeldWrites {

    private final long limitBytes;
    private final Consumer<List<RowSink.Write>> send;
    private List<RowSink.Write> held = new ArrayList<>();
    private long heldBytes;
    private long sentEarly;

    /** Writes held up to {@code limitBytes} (estimated, {@link BatchMemory#recordBytes}), then given to {@code send}. */
    HeldWrites(long limitBytes, Consumer<List<RowSink.Write>> send) {
        this.limitBytes = limitBytes;
        this.send = send;
    }

    /** Holds the write of a record of {@code keyAndValueBytes}; sends what is held if it reached the limit. */
    void add(RowSink.Write write, long keyAndValueBytes) {
        held.add(write);
        heldBytes += BatchMemory.recordBytes(keyAndValueBytes);
        if (heldBytes >= limitBytes) {
            List<RowSink.Write> full = held;
            held = new ArrayList<>();
            heldBytes = 0;
            sentEarly += full.size();
            send.accept(full);
        }
    }

    /** The writes held since the last send: what step 4 sends after the read. */
    List<RowSink.Write> rest() {
        return held;
    }

    /** How many writes were sent before the read ended. */
    long sentEarly() {
        return sentEarly;
    }
}
