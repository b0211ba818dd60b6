package io.oncestream.operator.progress;

import java.time.Duration;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.oncestream.contract.WorkerEndpoints;
import io.oncestream.operator.status.StatusProjection;

/**
 * One worker's chain of asks for {@code /progress}: one ask outstanding at a time, each telling
 * its answer to a {@link Listener}. The first ask is plain; once the worker answered with an
 * ETag, each ask is a long-poll ({@code If-None-Match} with it, {@code ?wait=}{@link #wait}),
 * which the worker holds until its document changes and answers 304 when the wait ends: an idle
 * worker costs one small answer per wait, and a change is told within a second or so. A worker
 * that sends no ETag (older than long-polls) is asked plainly, as before.
 * <p>
 * Two asks are at least one interval apart (an old worker answers at once; so does a worker
 * already holding as many requests as it holds): never a hot loop. A long-poll that waited its
 * wait is followed at once. After a failure the next ask is a plain one, an interval later.
 * <p>
 * An ask that times out while the worker's last answer was a document is not told as a
 * failure: it is asked again at once, with no wait, and only if that one fails too is the
 * worker reported. On a busy machine (an operator and thousands of workers sharing its cores)
 * one late answer is common, and each one reported would be two status writes (unreachable,
 * then back), whose reconciles made the machine busier still. A worker that is gone is not
 * given that second ask: its connection is refused or reset, which is told at once.
 */
public final class ProgressChain {

    /** How an ask ended: for the metrics. */
    public enum Result {
        /** The worker's document (of this job and index). */
        ANSWERED,
        /** 304: the document of the last answer still holds. */
        NOT_MODIFIED,
        /** No document: the request failed or timed out, or the answer was not one. */
        FAILED,
        /** Timed out after the worker had answered with a document: asked again at once before it counts. */
        RETRIED
    }

    /** Told each answer: the worker's entry (after a 304, the last one again) and how the ask ended. */
    @FunctionalInterface
    public interface Listener {
        void answered(ProgressChain chain, StatusProjection.Worker worker, Result result);
    }

    /**
     * Lets at most so many asks that are answered at once be in flight together (first asks, asks
     * of old workers, asks after a failure), so that thousands of chains started or failed
     * together do not open thousands of connections in the same moment. Long-polls pass freely:
     * the worker holds them, which costs the operator no thread (the HTTP client is asynchronous).
     */
    public static final class Gate {

        private final int size;
        private final Semaphore permits;
        private final Queue<Runnable> waiting = new ConcurrentLinkedQueue<>();

        public Gate(int size) {
            this.size = size;
            this.permits = new Semaphore(size);
        }

        /** Asks passed and not answered yet. */
        public int inFlight() {
            return size - permits.availablePermits();
        }

        void enter(Runnable ask) {
            waiting.add(ask);
            drain();
        }

        void leave() {
            permits.release();
            drain();
        }

        private void drain() {
            while (!waiting.isEmpty() && permits.tryAcquire()) {
                Runnable next = waiting.poll();
                if (next == null) {
                    permits.release(); // another thread took it: look again
                } else {
                    next.run();
                }
            }
        }
    }

    private static final Logger LOG = Logger.getLogger(ProgressChain.class);

    private final ProgressPoller poller;
    private final String jobId;
    private final Duration interval;
    private final Duration wait;
    private final ScheduledExecutorService timer;
    private final Gate gate;
    private final Listener listener;
    private volatile WorkerPods.Expected expected;
    /** The ETag of the last answer and its entry: only the answer of the one ask in flight changes them. */
    private volatile String etag;
    private volatile StatusProjection.Worker last;
    private volatile boolean stopped;
    /** The last ask timed out after a document and was not told: the one now in flight is its second chance. */
    private volatile boolean retrying;
    private volatile CompletableFuture<?> inFlight;
    private volatile ScheduledFuture<?> next;

    /**
     * A chain for worker {@code expected} of job {@code jobId} (one that {@link ProgressPoller#asksOverHttp}),
     * asking at most every {@code interval}, each long-poll held up to {@code wait}.
     */
    public ProgressChain(ProgressPoller poller, String jobId, WorkerPods.Expected expected, Duration interval, Duration wait,
            ScheduledExecutorService timer, Gate gate, Listener listener) {
        this.poller = poller;
        this.jobId = jobId;
        this.expected = expected;
        this.interval = interval;
        this.wait = wait;
        this.timer = timer;
        this.gate = gate;
        this.listener = listener;
    }

    /**
     * How long a long-poll may be held: two intervals less two timeouts, in whole seconds (at
     * most the worker's maximum), so that a worker that stopped answering is reported within two
     * intervals of the ask being sent: the long-poll times out after the wait and a timeout, the
     * ask right after it after one more timeout. Zero (no long-poll: conditional asks, each
     * interval) when the timeouts leave no whole second.
     */
    public static Duration longPollWait(Duration interval, Duration timeout) {
        long seconds = Math.min(interval.multipliedBy(2).minus(timeout.multipliedBy(2)).toSeconds(), WorkerEndpoints.MAX_WAIT_SECONDS);
        return Duration.ofSeconds(Math.max(0, seconds));
    }

    /**
     * Starts the chain where the ask of whoever made it left off ({@code answer}, a document or
     * not, and its {@code etag}, null if none): with an ETag the first ask is a long-poll, sent at
     * once (the worker holds it until its document changes); without one it is plain, one interval
     * from now.
     */
    public void start(StatusProjection.Worker answer, String etag) {
        if (etag != null && answer != null && answer.progress() != null && !wait.isZero()) {
            this.last = answer;
            this.etag = etag;
            schedule(0);
        } else {
            schedule(interval.toNanos());
        }
    }

    /** Stops the chain: no more asks, and the answer of one in flight (which the worker may still hold a while) is not told. */
    public void stop() {
        stopped = true;
        ScheduledFuture<?> pending = next;
        if (pending != null) {
            pending.cancel(false);
        }
        CompletableFuture<?> call = inFlight;
        if (call != null) {
            call.cancel(true);
        }
    }

    /** Whether {@code other} is the worker this chain asks: the same pod, at the same address. */
    public boolean asks(WorkerPods.Expected other) {
        WorkerPods.Expected e = expected;
        return e.podName().equals(other.podName()) && Objects.equals(e.pollAddress(), other.pollAddress())
                && Objects.equals(uid(e), uid(other));
    }

    /** The worker as the operator sees it now (its readiness): what the next entries say of it. */
    public void expect(WorkerPods.Expected now) {
        expected = now;
    }

    /**
     * The worker's entry as of its pod {@code now}, from this chain's last document, when the
     * chain vouches for it: it asks that very pod with long-polls, so a change of the document
     * is told within one interval (the worker answers the long-poll it holds, or the next one at
     * once); null when the worker must be asked (no document yet, the last ask failed or is being
     * asked again after a time-out, a worker without ETags, another pod or address).
     */
    public StatusProjection.Worker current(WorkerPods.Expected now) {
        StatusProjection.Worker worker = last;
        if (stopped || retrying || etag == null || wait.isZero() || worker == null || worker.progress() == null || !asks(now)) {
            return null;
        }
        return new StatusProjection.Worker(now.podName(), true, now.ready(), worker.progress(), null);
    }

    private static String uid(WorkerPods.Expected e) {
        return e.pod() == null || e.pod().getMetadata() == null ? null : e.pod().getMetadata().getUid();
    }

    private void schedule(long delayNanos) {
        if (!stopped) {
            try {
                next = timer.schedule(this::ask, delayNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                stopped = true; // the watch is closing: nothing more to ask
            }
        }
    }

    private void ask() {
        String tag = etag;
        if (tag != null && !wait.isZero() && !retrying) {
            send(tag, false, wait);
        } else {
            gate.enter(() -> send(tag, true, Duration.ZERO));
        }
    }

    private void send(String tag, boolean gated, Duration hold) {
        if (stopped) {
            if (gated) {
                gate.leave();
            }
            return;
        }
        long sent = System.nanoTime();
        CompletableFuture<ProgressPoller.Asked> call = poller.ask(jobId, expected, tag, hold);
        inFlight = call;
        call.whenComplete((asked, cancelled) -> {
            if (gated) {
                gate.leave();
            }
            if (asked != null && !stopped) {
                answered(asked, sent);
            }
        });
    }

    private void answered(ProgressPoller.Asked asked, long sent) {
        WorkerPods.Expected e = expected;
        StatusProjection.Worker worker = asked.notModified() ? last : asked.worker();
        if (worker == null) { // a 304 to an ask that named no answer of ours: start again with a plain one
            etag = null;
            schedule(interval.toNanos());
            return;
        }
        Result result = asked.notModified() ? Result.NOT_MODIFIED : worker.progress() != null ? Result.ANSWERED : Result.FAILED;
        if (asked.timedOut() && !retrying && last != null && last.progress() != null) {
            // Once late after a document: the last entry still stands, and the worker is asked again at once.
            retrying = true;
            tell(e, last, Result.RETRIED);
            schedule(0);
            return;
        }
        retrying = false;
        last = worker;
        etag = asked.etag();
        tell(e, worker, result);
        long now = System.nanoTime();
        schedule(result == Result.FAILED ? interval.toNanos() : Math.max(0, sent + interval.toNanos() - now));
    }

    private void tell(WorkerPods.Expected e, StatusProjection.Worker worker, Result result) {
        try {
            // The entry as of the worker's pod now (the pod's readiness may have changed since the document came).
            listener.answered(this, new StatusProjection.Worker(e.podName(), true, e.ready(), worker.progress(), worker.unreachable()),
                    result);
        } catch (RuntimeException bug) {
            LOG.warnf(bug, "taking the answer of %s failed; its next answer is taken as usual", e.podName());
        }
    }
}
