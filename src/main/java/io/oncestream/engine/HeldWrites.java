package io.oncestream.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The writes of a batch between their read and their send. Each time those held are estimated at
 * {@code limitBytes} ({@link BatchMemory#flushBytes()}, a 32nd of the heap), they are flushed: sent, and the
 * read goes on once Cassandra acknowledged them; the rest are sent when the read ended
 * ({@link BatchProtocol}, step 4). A batch's records thus die young instead of outliving the
 * collections of its whole read, and no batch holds more than that at once, even one far larger
 * than {@link BatchMemory} planned: a topic of larger records than the last batch's (or than the
 * 1 KiB assumed before any), or a replay, which reads the ranges its write-ahead entry recorded
 * under whatever heap the worker had then. That is safe (docs/protocol.md §5): every write
 * carries its record's timestamp whenever it is sent, and the commit still follows the last
 * acknowledgment.
 */
final class HeldWrites {

    private final long limitBytes;
    private final Consumer<List<RowSink.Write>> send;
    private List<RowSink.Write> held = new ArrayList<>();
    private long heldBytes;
    private long flushes;
    private long flushedWrites;

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
            flushes++;
            flushedWrites += full.size();
            send.accept(full);
        }
    }

    /** The writes held since the last send: what step 4 sends after the read. */
    List<RowSink.Write> rest() {
        return held;
    }

    /** All the writes given to this so far: those flushed and those held. */
    long writes() {
        return flushedWrites + held.size();
    }

    /** How many times writes were flushed before the read ended. */
    long flushes() {
        return flushes;
    }
}
