package io.oncestream.operator;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.progress.ProgressPoller;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.StatusProjection;

/**
 * Reads {@code /progress} again, every poll interval, of the jobs that have a worker with an
 * address, and reconciles a job only when what its workers say changed. A reconcile is a
 * pass over the whole job (spec, owned objects, status); done for every job at every
 * interval it was most of an operator's work at rest, though an idle job's answers stay the
 * same. Jobs whose pods have no address are not polled at all: their pods' changes reconcile
 * them. At most {@value #JOBS_IN_FLIGHT} jobs are polled at once.
 */
final class ProgressWatch implements AutoCloseable {

    static final int JOBS_IN_FLIGHT = 128;

    private static final Logger LOG = Logger.getLogger(ProgressWatch.class);

    /** What a job's last poll saw: the workers asked, and their answers. */
    private record Watched(String jobId, List<WorkerPods.Expected> expected, List<StatusProjection.Worker> answers) {
    }

    private final Map<ResourceID, Watched> watched = new ConcurrentHashMap<>();
    /** Jobs whose answers changed and whose reconcile has not run yet: the operator's backlog. */
    private final java.util.Set<ResourceID> pending = ConcurrentHashMap.newKeySet();
    private final AtomicReference<IndexedResourceCache<StreamJob>> jobs = new AtomicReference<>();
    private final ProgressPoller poller;
    private final OperatorMetrics metrics;
    private final SimpleInboundEventSource<StreamJob> changes = new SimpleInboundEventSource<>("worker-progress");
    private final Semaphore inFlight = new Semaphore(JOBS_IN_FLIGHT);
    private final AtomicLong roundsDone = new AtomicLong();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "progress-watch");
        thread.setDaemon(true);
        return thread;
    });

    ProgressWatch(ProgressPoller poller, Duration interval, OperatorMetrics metrics) {
        this.poller = poller;
        this.metrics = metrics;
        // At a fixed rate: a round that takes longer (many jobs, slow workers) delays the next, never overlaps it.
        timer.scheduleAtFixedRate(this::round, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The event source through which a change reconciles its job. */
    SimpleInboundEventSource<StreamJob> changes() {
        return changes;
    }

    /**
     * What a reconcile polled: the job is watched while some worker had an address, and its
     * answers are what the next round compares with.
     */
    void polled(ResourceID job, String jobId, List<WorkerPods.Expected> expected, List<StatusProjection.Worker> answers,
            boolean anyAddress, IndexedResourceCache<StreamJob> cache) {
        jobs.compareAndSet(null, cache);
        pending.remove(job);
        if (anyAddress) {
            watched.put(job, new Watched(jobId, expected, answers));
        } else {
            watched.remove(job);
        }
    }

    /** A job that polls nothing (invalid spec, drained, deleted). */
    void forget(ResourceID job) {
        watched.remove(job);
        pending.remove(job);
    }

    /** Jobs waiting for the reconcile a change of their workers' answers asked for. */
    int pendingJobs() {
        return pending.size();
    }

    int watchedJobs() {
        return watched.size();
    }

    /** Rounds that have sent all their polls: a test waits for one to know what the watch still asks. */
    long roundsDone() {
        return roundsDone.get();
    }

    /** Jobs whose polls were sent and not yet answered. */
    int jobsInFlight() {
        return JOBS_IN_FLIGHT - inFlight.availablePermits();
    }

    private void round() {
        try {
            IndexedResourceCache<StreamJob> cache = jobs.get();
            for (Map.Entry<ResourceID, Watched> entry : watched.entrySet()) {
                ResourceID job = entry.getKey();
                if (cache != null && cache.get(job).isEmpty()) {
                    watched.remove(job); // deleted: its workers go with it
                    pending.remove(job);
                    continue;
                }
                inFlight.acquire();
                Watched before = entry.getValue();
                poller.pollAsync(before.jobId(), before.expected()).whenComplete((answers, failure) -> {
                    inFlight.release();
                    if (failure != null) {
                        LOG.warnf(failure, "polling the workers of %s failed; the next round asks again", job);
                        return;
                    }
                    metrics.polled(before.expected(), answers);
                    if (!answers.equals(before.answers())
                            && watched.replace(job, before, new Watched(before.jobId(), before.expected(), answers))) {
                        pending.add(job);
                        changes.propagateEvent(job);
                    }
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("a round of progress polls failed; the next one runs as planned", e);
        } finally {
            roundsDone.incrementAndGet();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
