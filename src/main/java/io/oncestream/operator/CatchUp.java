package io.oncestream.operator;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * Says once, in the log, when this operator has reconciled every StreamJob at least once since
 * it began to reconcile: after a restart or a change of leader, until then some job's status may
 * be as old as the last operator left it. Each reconcile calls {@link #reconciled}; the jobs that
 * exist are counted only when the reconciled ones reach the last count, and every
 * {@value #RECOUNT_EVERY} reconciles (a job deleted before its first reconcile lowers it), so the
 * check costs a comparison per reconcile.
 */
final class CatchUp {

    static final int RECOUNT_EVERY = 256;

    private static final Logger LOG = Logger.getLogger(CatchUp.class);

    private final LongSupplier nanos;
    private final long processStarted;
    private long firstReconcile;
    private volatile int existing = -1;
    private final AtomicLong calls = new AtomicLong();
    private volatile boolean done;

    /** @param processStarted the process's start on the clock of {@code nanos} */
    CatchUp(LongSupplier nanos, long processStarted) {
        this.nanos = nanos;
        this.processStarted = processStarted;
    }

    /** For the running process: its uptime gives its start on {@link System#nanoTime()}. */
    static CatchUp ofThisProcess() {
        long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
        return new CatchUp(System::nanoTime, System.nanoTime() - Duration.ofMillis(uptime).toNanos());
    }

    /**
     * After a reconcile.
     *
     * @param reconciled the distinct existing jobs reconciled since start
     * @param jobs counts the jobs that exist now (the SDK's cache)
     * @return the message, the one time it is logged; null every other time
     */
    String reconciled(int reconciled, IntSupplier jobs) {
        // Without a lock until the jobs are to be counted: every reconcile thread passes here.
        int last = existing;
        if (done || (last >= 0 && reconciled < last && calls.incrementAndGet() % RECOUNT_EVERY != 0)) {
            return null;
        }
        return count(reconciled, jobs);
    }

    private synchronized String count(int reconciled, IntSupplier jobs) {
        if (done) {
            return null;
        }
        long now = nanos.getAsLong();
        if (existing < 0) {
            firstReconcile = now;
        }
        existing = jobs.getAsInt();
        if (reconciled < existing) {
            return null;
        }
        done = true;
        String message = String.format(Locale.ROOT, "Caught up: each of the %,d StreamJobs reconciled at least once,"
                + " %.1f s after the first reconcile (%.1f s after the process started)", existing,
                (now - firstReconcile) / 1e9, (now - processStarted) / 1e9);
        LOG.info(message);
        return message;
    }
}
