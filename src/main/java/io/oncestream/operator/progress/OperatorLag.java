package io.oncestream.operator.progress;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.processing.event.ResourceID;

import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.Backoff;
import io.oncestream.engine.SourceException;
import io.oncestream.engine.SourceLag;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.kafka.LagProbe;

/**
 * The lag of a job none of whose workers answers (every worker gone, crash-looping or not
 * scheduled): the operator reads it from Kafka itself, with the same probe a worker runs, from
 * the job's consumer-group offsets (a worker commits them right after each batch's commit). So a
 * job's lag keeps growing in its status even when no worker runs. A job whose Kafka settings are
 * in a Secret is not probed: the operator does not read Secrets.
 * <p>
 * Probes run on their own schedule, not on reconciles: a reconcile that wants a job's lag
 * registers it ({@link #lag}) and takes the last reading; the job is probed every
 * {@link Timing#interval} and reconciled ({@code onReading}) only when a reading differs from
 * the one before or records are behind (their age grows); the same zero lag read again
 * reconciles nothing. A reconcile per job and interval, each starting a probe that failed and
 * logged, was most of the operator's work when thousands of unschedulable jobs pointed at a
 * dead cluster. A failing job is tried again after a back-off (5 s doubling to 60 s) and logs
 * once when it starts failing; its cluster is paused for all jobs after a few failures in a row
 * ({@link ClusterPauses}). At most {@value #THREADS} probes run at once.
 */
public final class OperatorLag implements AutoCloseable {

    static final int THREADS = 2;

    private static final Logger LOG = Logger.getLogger(OperatorLag.class);

    /** What the probe last read, and when. */
    public record Reading(Map<String, SourceLag> partitions, Instant at) {
    }

    /**
     * How often a job is probed, how its retries and its cluster's pauses back off, and how often
     * deleted jobs are looked for.
     */
    record Timing(Duration interval, Duration firstRetry, Duration maxRetry, Duration sweep) {
        static final Timing DEFAULT = new Timing(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(60),
                Duration.ofSeconds(30));
    }

    /** One job's reader of its lag: a {@link LagProbe}, or a test's fake. */
    interface Probe extends AutoCloseable {

        /** @throws SourceException when Kafka does not answer */
        Map<String, SourceLag> read();

        @Override
        void close();
    }

    /** A registered job. Its turns never overlap: each schedules the next as it ends. */
    private static final class Job {
        final ResourceID id;
        final String name;
        final JobConfig.KafkaSource source;
        final Backoff retries;
        volatile Reading last;
        /** Only its turns read and write it. */
        boolean failing;
        // Guarded by this: release() may come from a reconcile while a turn runs.
        Probe probe;
        boolean inTurn;
        boolean released;
        ScheduledFuture<?> next;

        Job(ResourceID id, JobConfig.KafkaSource source, Timing timing) {
            this.id = id;
            this.name = StreamJobResources.jobId(id.getNamespace().orElse(""), id.getName());
            this.source = source;
            this.retries = new Backoff(timing.firstRetry().toMillis(), timing.maxRetry().toMillis());
        }

        synchronized boolean beginTurn() {
            inTurn = !released;
            return inTurn;
        }

        synchronized void release() {
            released = true;
            if (next != null) {
                next.cancel(false);
            }
            if (!inTurn) {
                closeProbe(); // else the turn under way closes it as it ends
            }
        }

        /** The open probe, or a new one. */
        synchronized Probe probe(Function<JobConfig.KafkaSource, Probe> probes) {
            if (probe == null) {
                probe = probes.apply(source);
            }
            return probe;
        }

        synchronized void closeProbe() {
            if (probe != null) {
                probe.close();
                probe = null;
            }
        }
    }

    private final Function<JobConfig.KafkaSource, Probe> probes;
    private final Consumer<ResourceID> onReading;
    private final Predicate<ResourceID> exists;
    private final Timing timing;
    private final ClusterPauses clusters;
    private final Map<ResourceID, Job> jobs = new ConcurrentHashMap<>();
    private final AtomicLong deferredTurns = new AtomicLong();
    private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(THREADS, r -> {
        Thread t = new Thread(r, "operator-lag-probe");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param onReading asks for a reconcile of a job whose reading changed or is behind
     * @param exists    whether a job still exists: the probes of deleted jobs are closed
     */
    public OperatorLag(Consumer<ResourceID> onReading, Predicate<ResourceID> exists) {
        this(lagProbes(Timing.DEFAULT.interval()), onReading, exists, Timing.DEFAULT);
    }

    OperatorLag(Function<JobConfig.KafkaSource, Probe> probes, Consumer<ResourceID> onReading, Predicate<ResourceID> exists,
            Timing timing) {
        this.probes = probes;
        this.onReading = onReading;
        this.exists = exists;
        this.timing = timing;
        this.clusters = new ClusterPauses(timing.firstRetry(), timing.maxRetry());
        executor.setRemoveOnCancelPolicy(true); // a released job leaves no task behind
        executor.scheduleWithFixedDelay(this::sweep, timing.sweep().toMillis(), timing.sweep().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The worker's probe, reading the job's consumer-group offsets, each probe waiting at most {@code timeout}. */
    static Function<JobConfig.KafkaSource, Probe> lagProbes(Duration timeout) {
        return source -> {
            LagProbe probe = new LagProbe(source, timeout, source.groupId() + "-operator");
            return new Probe() {
                @Override
                public Map<String, SourceLag> read() {
                    return probe.probe(Map.of());
                }

                @Override
                public void close() {
                    probe.close();
                }
            };
        };
    }

    /**
     * Job {@code id}'s last reading, none before its first probe answered; the job is probed from
     * now on until {@link #release}d. A job with a Secret is not probed (and released if it was);
     * a changed source (another bootstrap, other topics) starts over with a new probe.
     *
     * @param withSecret whether the job's Kafka settings include a Secret
     */
    public Optional<Reading> lag(ResourceID id, JobConfig.KafkaSource source, boolean withSecret) {
        Job job = jobs.get(id);
        if (withSecret || (job != null && !job.source.equals(source))) {
            release(id);
            job = null;
        }
        if (withSecret) {
            return Optional.empty();
        }
        if (job == null) {
            Job created = new Job(id, source, timing);
            job = jobs.putIfAbsent(id, created);
            if (job == null) {
                job = created;
                schedule(created, 0);
            }
        }
        return Optional.ofNullable(job.last);
    }

    /** Stops probing job {@code id} and closes its probe: its workers report again, or it no longer runs. */
    public void release(ResourceID id) {
        Job job = jobs.remove(id);
        if (job != null) {
            job.release();
        }
    }

    /** Jobs registered. */
    int jobs() {
        return jobs.size();
    }

    /** Turns that did not probe because their cluster was paused. */
    long deferredTurns() {
        return deferredTurns.get();
    }

    private void schedule(Job job, long delayMs) {
        synchronized (job) {
            if (job.released) {
                return;
            }
            try {
                job.next = executor.schedule(() -> turn(job), delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // closed: nothing is probed any more
            }
        }
    }

    private void turn(Job job) {
        if (!job.beginTurn()) {
            return;
        }
        long nextMs = probeUnlessPaused(job);
        synchronized (job) {
            job.inTurn = false;
            if (job.released) {
                job.closeProbe();
                return;
            }
        }
        schedule(job, nextMs);
    }

    /** Probes the job unless its cluster is paused; returns when to look at it again, in milliseconds. */
    private long probeUnlessPaused(Job job) {
        String bootstrap = job.source.bootstrapServers();
        long pausedMs = clusters.pausedFor(bootstrap);
        if (pausedMs > 0) {
            deferredTurns.incrementAndGet();
            return pausedMs;
        }
        Map<String, SourceLag> partitions;
        try {
            partitions = job.probe(probes).read();
        } catch (SourceException e) {
            clusters.failed(bootstrap, e.getMessage());
            return failed(job, e, false);
        } catch (RuntimeException e) { // not Kafka's answer but a fault of the probe: not the cluster's failure
            return failed(job, e, true);
        }
        clusters.answered(bootstrap);
        job.retries.reset();
        if (job.failing) {
            job.failing = false;
            LOG.infof("%s: the operator reads its lag from Kafka again", job.name);
        }
        Reading before = job.last;
        job.last = new Reading(partitions, Instant.now());
        boolean behind = partitions.values().stream().anyMatch(l -> l.records() > 0);
        if (before == null || behind || !before.partitions().equals(partitions)) {
            reconcile(job);
        }
        return timing.interval().toMillis();
    }

    /** Closes the failed probe and returns the job's next retry, logged when the job starts failing. */
    private long failed(Job job, RuntimeException e, boolean withTrace) {
        job.closeProbe(); // a failing job holds no client reconnecting to brokers that do not answer
        long retryMs = job.retries.next();
        if (!job.failing) {
            job.failing = true;
            LOG.warnf(withTrace ? e : null, "%s: no worker reports its lag and the operator cannot read it either (tried again "
                    + "after %d s, up to %d s): %s", job.name, retryMs / 1000, timing.maxRetry().toSeconds(), e.getMessage());
        }
        return retryMs;
    }

    private void reconcile(Job job) {
        try {
            onReading.accept(job.id);
        } catch (RuntimeException e) {
            LOG.warnf(e, "%s: asking for a reconcile after a lag reading failed; the next reading asks again", job.name);
        }
    }

    /** Closes the probes of jobs that were deleted, and forgets the clusters no job uses. */
    private void sweep() {
        try {
            jobs.keySet().stream().filter(id -> !exists.test(id)).toList().forEach(this::release);
            clusters.retainOnly(jobs.values().stream().map(j -> j.source.bootstrapServers()).collect(Collectors.toSet()));
        } catch (RuntimeException e) {
            LOG.warn("sweeping the lag probes of deleted jobs failed; the next sweep tries again", e);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        jobs.keySet().forEach(this::release);
    }
}
