package io.oncestream.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The writes of one batch, sent while the batch is still being read. The reading thread adds
 * each write as its record is mapped; once {@code firstWriteRows} have accumulated a writer
 * thread starts, and each time it is free it sends everything that accumulated since (one
 * {@link RowSink#writeAll} call, retried by the sink until acknowledged), so that the chunks
 * grow when Cassandra is the slower side and the sink can still group rows of a partition.
 * A batch with fewer writes than {@code firstWriteRows} is written by the reading thread once
 * it is read, as one call, with no thread started.
 *
 * <p>Nothing here changes the protocol: {@code offsets/N} is durable before the first record is
 * read, so before any write; {@code commits/N} waits for {@link #finish}, which returns only
 * when every write of the batch is acknowledged. A failure of the writer (a refused write, a
 * stop, a crash hook) is rethrown to the reading thread at its next {@link #add} or at
 * {@link #finish}; a failure of the reading thread calls {@link #abandon}, which waits for the
 * writer's current call so that nothing of the batch is still sent after the engine gave up.
 */
final class StreamedWrites {

    /**
     * Writes handed over to the writer thread at a time, at most (the reading thread collects
     * them locally in between): fewer if {@code firstWriteRows} is smaller.
     */
    private static final int HANDOFF = 256;

    /** What the sink tells, and the size of each {@link RowSink#writeAll} call before it is made. */
    interface Listener extends RowSink.SinkListener {
        void sending(int writes);
    }

    private final RowSink sink;
    private final Listener listener;
    private final int firstWriteRows;
    private final int handoff;
    private final String threadName;
    private final Object lock = new Object();

    private List<RowSink.Write> local = new ArrayList<>();
    private int added;

    // Guarded by lock.
    private List<RowSink.Write> handed = new ArrayList<>();
    private boolean noMore;
    private boolean abandoned;
    private boolean busy;
    private RuntimeException failedWith;
    private Error failedWithError;
    private Thread writer;

    StreamedWrites(RowSink sink, Listener listener, int firstWriteRows, String threadName) {
        this.sink = sink;
        this.listener = listener;
        this.firstWriteRows = Math.max(1, firstWriteRows);
        this.handoff = Math.min(HANDOFF, this.firstWriteRows);
        this.threadName = threadName;
    }

    /** How many writes were added. */
    int size() {
        return added;
    }

    /** Adds a write; rethrows what the writer failed with, if it did. */
    void add(RowSink.Write write) {
        local.add(write);
        added++;
        if (writer == null ? added >= firstWriteRows : local.size() >= handoff) {
            handOver();
        }
    }

    /**
     * No more writes: sends what is left and returns once every write was acknowledged.
     * Rethrows what the writer failed with.
     */
    void finish() {
        if (writer == null) {
            if (!local.isEmpty()) {
                listener.sending(local.size());
                sink.writeAll(local, listener);
            }
            return;
        }
        synchronized (lock) {
            handed.addAll(local);
            local = new ArrayList<>();
            noMore = true;
            lock.notifyAll();
            while (busy || !handed.isEmpty()) {
                rethrowFailure();
                waitOnLock();
            }
            rethrowFailure();
        }
    }

    /** The reading side failed: no more writes are sent; returns once the writer's current call ended. */
    void abandon() {
        if (writer == null) {
            return;
        }
        synchronized (lock) {
            abandoned = true;
            lock.notifyAll();
        }
        boolean interrupted = false;
        while (writer.isAlive()) {
            try {
                writer.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void handOver() {
        synchronized (lock) {
            rethrowFailure();
            handed.addAll(local);
            lock.notifyAll();
        }
        local = new ArrayList<>();
        if (writer == null) {
            writer = new Thread(this::writeLoop, threadName);
            writer.setDaemon(true);
            writer.start();
        }
    }

    private void writeLoop() {
        while (true) {
            List<RowSink.Write> chunk;
            synchronized (lock) {
                while (handed.isEmpty() && !noMore && !abandoned) {
                    waitOnLock();
                }
                if (abandoned || handed.isEmpty()) {
                    lock.notifyAll();
                    return;
                }
                chunk = handed;
                handed = new ArrayList<>();
                busy = true;
            }
            try {
                listener.sending(chunk.size());
                sink.writeAll(chunk, listener);
            } catch (RuntimeException e) {
                fail(e, null);
                return;
            } catch (Error e) {
                fail(null, e);
                return;
            }
            synchronized (lock) {
                busy = false;
                lock.notifyAll();
            }
        }
    }

    private void fail(RuntimeException exception, Error error) {
        synchronized (lock) {
            failedWith = exception;
            failedWithError = error;
            busy = false;
            handed.clear();
            lock.notifyAll();
        }
    }

    private void rethrowFailure() {
        if (failedWith != null) {
            throw failedWith;
        }
        if (failedWithError != null) {
            throw failedWithError;
        }
    }

    private void waitOnLock() {
        try {
            lock.wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StopRequestedException();
        }
    }
}
