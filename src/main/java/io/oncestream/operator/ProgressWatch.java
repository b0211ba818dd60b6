package io.oncestream.operator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.progress.ProgressChain;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.StatusProjection;

/**
 * Follows what the workers of jobs that have a worker with an address say on {@code /progress},
 * and reconciles a job only when that changed. A reconcile is a pass over the whole job (spec,
 * owned objects, status); done for every job at every interval it was most of an operator's work
 * at rest, though an idle job's answers stay the same. Jobs whose pods have no address are not
 * asked at all: their pods' changes reconcile them.
 * <p>
 * Each worker with an address has a {@link ProgressChain}: long-polls that the worker answers
 * when its document changes (the job is reconciled within a second or so) or, after a wait of
 * two intervals less two poll timeouts, with a 304 that costs next to nothing. So a change shows
 * within one interval as before, an idle worker costs one small answer per wait instead of a
 * document per interval, and a worker that stops answering is reported within two intervals
 * of the ask being sent (a first time-out after a document is asked again at once, see
 * {@link ProgressChain}; a worker whose process ended fails at once: its connection closes). Workers
 * without long-polls are asked every interval, as before. A reconcile takes the answers the
 * chains vouch for ({@link #known}) and asks only the other workers, so each worker is one
 * connection, its chain's. At most {@value #ASKS_IN_FLIGHT} asks
 * answered at once are in flight together; long-polls, held by the workers, are not counted.
 */
final class ProgressWatch implements AutoCloseable {

    static final int ASKS_IN_FLIGHT = 128;

    private static final Logger LOG = Logger.getLogger(ProgressWatch.class);

    /**
     * A watched job: the workers its last reconcile expected and their answers since (which a
     * chain's answer is compared with), and one chain per worker asked over HTTP, by index.
     * Guarded by itself; once removed it takes no more chains.
     */
    private static final class Job {
        final String jobId;
        List<WorkerPods.Expected> expected = List.of();
        List<StatusProjection.Worker> answers = List.of();
        final Map<Integer, ProgressChain> chains = new HashMap<>();
        boolean removed;

        Job(String jobId) {
            this.jobId = jobId;
        }
    }

    private final Map<ResourceID, Job> watched = new ConcurrentHashMap<>();
    /** Jobs whose answers changed and whose reconcile has not run yet: the operator's backlog. */
    private final java.util.Set<ResourceID> pending = ConcurrentHashMap.newKeySet();
    private final AtomicReference<IndexedResourceCache<StreamJob>> jobs = new AtomicReference<>();
    private final ProgressPoller poller;
    private final OperatorMetrics metrics;
    private final Duration interval;
    private final Duration wait;
    private final SimpleInboundEventSource<StreamJob> changes = new SimpleInboundEventSource<>("worker-progress");
    private final ProgressChain.Gate gate = new ProgressChain.Gate(ASKS_IN_FLIGHT);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "progress-watch");
        thread.setDaemon(true);
        return thread;
    });

    /** Asks each worker at most every {@code interval}; long-polls wait as {@link ProgressChain#longPollWait} says. */
    ProgressWatch(ProgressPoller poller, Duration interval, OperatorMetrics metrics) {
        this.poller = poller;
        this.metrics = metrics;
        this.interval = interval;
        this.wait = ProgressChain.longPollWait(interval, poller.timeout());
        timer.scheduleWithFixedDelay(this::forgetDeleted, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The event source through which a change reconciles its job. */
    SimpleInboundEventSource<StreamJob> changes() {
        return changes;
    }

    /**
     * What a reconcile polled: the job is watched while some worker had an address, its answers
     * are what the chains' answers are compared with, and each worker asked over HTTP keeps its
     * chain (a new pod or address gets a new one).
     */
    void polled(ResourceID job, String jobId, List<WorkerPods.Expected> expected, ProgressPoller.Answers answers,
            boolean anyAddress, IndexedResourceCache<StreamJob> cache) {
        jobs.compareAndSet(null, cache);
        pending.remove(job);
        if (!anyAddress) {
            stop(watched.remove(job));
            return;
        }
        while (true) {
            Job watching = watched.computeIfAbsent(job, id -> new Job(jobId));
            synchronized (watching) {
                if (watching.removed) {
                    continue; // forgotten meanwhile: watched afresh
                }
                watching.expected = expected;
                watching.answers = answers.workers();
                follow(job, watching, answers.etags());
                return;
            }
        }
    }

    /**
     * Keeps one chain per expected worker asked over HTTP: the same pod's chain goes on, others
     * end or start where the reconcile's ask left off (its answer and {@code etags}).
     */
    private void follow(ResourceID id, Job job, List<String> etags) {
        for (Iterator<Map.Entry<Integer, ProgressChain>> it = job.chains.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Integer, ProgressChain> chain = it.next();
            int index = chain.getKey();
            if (index >= job.expected.size() || !ProgressPoller.asksOverHttp(job.expected.get(index))
                    || !chain.getValue().asks(job.expected.get(index))) {
                chain.getValue().stop();
                it.remove();
            }
        }
        for (int i = 0; i < job.expected.size(); i++) {
            WorkerPods.Expected e = job.expected.get(i);
            ProgressChain chain = job.chains.get(i);
            if (chain != null) {
                chain.expect(e);
            } else if (ProgressPoller.asksOverHttp(e)) {
                int index = i;
                chain = new ProgressChain(poller, job.jobId, e, interval, wait, timer, gate,
                        (c, worker, result) -> answered(id, job, index, c, worker, result));
                job.chains.put(i, chain);
                chain.start(i < job.answers.size() ? job.answers.get(i) : null, i < etags.size() ? etags.get(i) : null);
            }
        }
    }

    /** A chain's answer: the job is reconciled if it differs from what the job's workers said so far. */
    private void answered(ResourceID id, Job job, int index, ProgressChain chain, StatusProjection.Worker worker,
            ProgressChain.Result result) {
        metrics.asked(result);
        synchronized (job) {
            if (job.removed || job.chains.get(index) != chain || index >= job.answers.size()
                    || worker.equals(job.answers.get(index))) {
                return;
            }
            List<StatusProjection.Worker> answers = new ArrayList<>(job.answers);
            answers.set(index, worker);
            job.answers = Collections.unmodifiableList(answers);
        }
        pending.add(id);
        changes.propagateEvent(id);
    }

    /**
     * What the chains of job {@code job} vouch for, one entry per worker of {@code expected}
     * (see {@link ProgressChain#current}), null where the worker is to be asked: a reconcile
     * asks only those. A reconcile runs when an answer changed, so asking every worker again
     * was an ask per change, and it opened a second connection beside the one the long-poll holds.
     */
    List<StatusProjection.Worker> known(ResourceID job, List<WorkerPods.Expected> expected) {
        List<StatusProjection.Worker> known = new ArrayList<>(Collections.nCopies(expected.size(), null));
        Job watching = watched.get(job);
        if (watching != null) {
            synchronized (watching) {
                for (int i = 0; i < expected.size(); i++) {
                    ProgressChain chain = watching.chains.get(i);
                    if (chain != null) {
                        known.set(i, chain.current(expected.get(i)));
                    }
                }
            }
        }
        return known;
    }

    /** A job that polls nothing (invalid spec, drained, deleted). */
    void forget(ResourceID job) {
        stop(watched.remove(job));
        pending.remove(job);
    }

    private static void stop(Job job) {
        if (job != null) {
            synchronized (job) {
                job.removed = true;
                job.chains.values().forEach(ProgressChain::stop);
                job.chains.clear();
            }
        }
    }

    /** Jobs deleted from the cache are forgotten: their workers go with them. */
    private void forgetDeleted() {
        try {
            IndexedResourceCache<StreamJob> cache = jobs.get();
            if (cache != null) {
                watched.keySet().stream().filter(job -> cache.get(job).isEmpty()).toList().forEach(this::forget);
            }
        } catch (RuntimeException e) {
            LOG.warn("looking for deleted jobs among the watched failed; the next look runs as planned", e);
        }
    }

    /** Jobs waiting for the reconcile a change of their workers' answers asked for. */
    int pendingJobs() {
        return pending.size();
    }

    int watchedJobs() {
        return watched.size();
    }

    /** Workers that have a chain of asks. */
    int watchedWorkers() {
        return watched.values().stream().mapToInt(job -> {
            synchronized (job) {
                return job.chains.size();
            }
        }).sum();
    }

    /** Asks answered at once (not long-polls) sent and not answered yet. */
    int asksInFlight() {
        return gate.inFlight();
    }

    /** How long a long-poll is held at most. */
    Duration longPollWait() {
        return wait;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        watched.keySet().forEach(this::forget);
    }
}
