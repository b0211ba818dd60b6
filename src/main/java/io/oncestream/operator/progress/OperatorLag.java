package io.oncestream.operator.progress;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.jboss.logging.Logger;

import io.oncestream.engine.SourceException;
import io.oncestream.engine.SourceLag;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.kafka.LagProbe;

/**
 * The lag of a job none of whose workers answers (every worker gone, crash-looping or not
 * scheduled): the operator reads it from Kafka itself, with the same probe a worker runs,
 * from the job's consumer-group offsets (a worker commits them right after each batch's
 * commit). So a job's lag keeps growing in its status even when no worker runs. Probes run in
 * the background, one per job at a time, at most every {@link #INTERVAL}; a reconcile takes
 * the last figures. A job whose Kafka settings are in a Secret is not probed: the operator
 * does not read Secrets.
 */
public final class OperatorLag implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(OperatorLag.class);

    static final Duration INTERVAL = Duration.ofSeconds(5);
    /** A job not asked about for this long has its probe closed. */
    private static final Duration IDLE = Duration.ofMinutes(2);

    /** What the probe last read, and when. */
    public record Reading(Map<String, SourceLag> partitions, Instant at) {
    }

    private static final class Entry {
        final LagProbe probe;
        volatile Reading last;
        volatile boolean inFlight;
        volatile long askedNanos = System.nanoTime();
        volatile long probedNanos;
        volatile boolean failing;

        Entry(LagProbe probe) {
            this.probe = probe;
        }
    }

    private final Map<String, Entry> jobs = new ConcurrentHashMap<>();
    private final ExecutorService probes = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "operator-lag-probe");
        t.setDaemon(true);
        return t;
    });

    /**
     * The last figures read for job {@code jobId} (none yet on the first call), and a new probe
     * started in the background if the last one is older than {@link #INTERVAL}.
     *
     * @param withSecret whether the job's Kafka settings include a Secret (then nothing is probed)
     */
    public Optional<Reading> lag(String jobId, JobConfig.KafkaSource source, boolean withSecret) {
        sweep();
        if (withSecret) {
            return Optional.empty();
        }
        Entry entry = jobs.computeIfAbsent(jobId, id -> new Entry(new LagProbe(source, INTERVAL, source.groupId() + "-operator")));
        entry.askedNanos = System.nanoTime();
        if (!entry.inFlight && System.nanoTime() - entry.probedNanos >= INTERVAL.toNanos()) {
            entry.inFlight = true;
            probes.execute(() -> {
                try {
                    entry.last = new Reading(entry.probe.probe(Map.of()), Instant.now());
                    entry.failing = false;
                } catch (SourceException e) {
                    if (!entry.failing) {
                        LOG.warnf("%s: no worker reports its lag and the operator cannot read it either: %s", jobId, e.getMessage());
                    }
                    entry.failing = true;
                } catch (RuntimeException e) {
                    LOG.warnf(e, "%s: reading the lag failed", jobId);
                } finally {
                    entry.probedNanos = System.nanoTime();
                    entry.inFlight = false;
                }
            });
        }
        return Optional.ofNullable(entry.last);
    }

    /** Closes the probes of jobs nobody asked about for a while (their workers report again, or the job is gone). */
    private void sweep() {
        long now = System.nanoTime();
        jobs.entrySet().removeIf(e -> {
            boolean idle = now - e.getValue().askedNanos > IDLE.toNanos() && !e.getValue().inFlight;
            if (idle) {
                e.getValue().probe.close();
            }
            return idle;
        });
    }

    @Override
    public void close() {
        probes.shutdownNow();
        jobs.values().forEach(e -> e.probe.close());
        jobs.clear();
    }
}
