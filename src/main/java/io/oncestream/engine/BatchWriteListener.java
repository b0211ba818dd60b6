package io.oncestream.engine;

import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.EngineState;

/**
 * What the worker reports while a batch's writes wait for Cassandra ({@code WAITING_FOR_SINK},
 * the error, and that it passed), and the {@link ProtocolStep#MID_WRITE} hook once about half of
 * them are acknowledged. A batch's writes are flushed while it is read ({@link HeldWrites}), and
 * their number is known only when the read ended: until then half of its planned records stands
 * for half of them, and if the known number's half was passed already, the hook comes then.
 */
final class BatchWriteListener implements RowSink.SinkListener {

    /** The engine's log lines carry one name, whichever of its classes writes them. */
    private static final Logger LOG = Logger.getLogger(MicroBatchEngine.class.getName());

    private final long batchId;
    /** Half of the batch's writes: of its planned records until their number is known. */
    private volatile long halfWrites;
    private boolean midReached;
    private final ProgressTracker progress;
    private final ProtocolHooks hooks;
    private final AtomicLong acknowledged = new AtomicLong();
    /** The error this batch's writes reported, cleared once Cassandra acknowledges them again. */
    private volatile String sinkError;

    BatchWriteListener(long batchId, long plannedRecords, Controls controls) {
        this.batchId = batchId;
        this.halfWrites = Math.max(1, plannedRecords / 2);
        this.progress = controls.progress();
        this.hooks = controls.hooks();
    }

    /** The read ended: the batch has {@code writes} writes in all. */
    void total(long writes) {
        halfWrites = Math.max(1, writes / 2);
        if (acknowledged.get() >= halfWrites && reachMid()) {
            hooks.reached(ProtocolStep.MID_WRITE, batchId);
        }
    }

    @Override
    public void waitingForSink(Throwable cause, int pendingWrites) {
        sinkError = "Cassandra: " + cause.getMessage();
        progress.sinkAvailable(false);
        progress.state(EngineState.WAITING_FOR_SINK);
        progress.error(sinkError);
        LOG.log(Level.WARNING, "batch " + batchId + ": " + pendingWrites
                + " writes failed, retrying until Cassandra acknowledges them (nothing is committed meanwhile; the lag"
                + " grows; check the Cassandra nodes and the network to them): " + cause.getMessage());
    }

    @Override
    public void sinkAvailable() {
        progress.sinkAvailable(true);
        progress.state(EngineState.WRITING);
        progress.errorPassed(sinkError);
    }

    private synchronized boolean reachMid() {
        boolean first = !midReached;
        midReached = true;
        return first;
    }

    @Override
    public void acknowledged(int count) {
        long after = acknowledged.addAndGet(count);
        if (after >= halfWrites && reachMid()) {
            hooks.reached(ProtocolStep.MID_WRITE, batchId);
        }
    }
}
