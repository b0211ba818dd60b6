package io.oncestream.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.SourceException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.kafka.LagProbe;

/**
 * Runs the {@link LagProbe} every {@code interval} on a thread of its own, whatever the engine
 * does (plans, waits for Cassandra, waits for its checkpoint), and hands what it saw to the
 * progress: the lag and the source's availability a worker reports are never older than one
 * interval plus one timeout.
 */
final class LagWatch implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(LagWatch.class.getName());

    private final LagProbe probe;
    private final ProgressTracker progress;
    private final ScheduledExecutorService timer;
    private boolean failing;

    /** Starts probing at once; {@code interval} zero starts nothing. */
    static LagWatch start(JobConfig config, int workerIndex, ProgressTracker progress, Duration interval) {
        return new LagWatch(config, workerIndex, progress, interval);
    }

    private LagWatch(JobConfig config, int workerIndex, ProgressTracker progress, Duration interval) {
        this.progress = progress;
        if (interval.isZero()) {
            this.probe = null;
            this.timer = null;
            return;
        }
        // A probe may take as long as the interval, never longer: the next one starts after it.
        this.probe = new LagProbe(config.source(), interval.compareTo(Duration.ofSeconds(2)) < 0 ? Duration.ofSeconds(2) : interval,
                config.source().groupId() + "-worker-" + workerIndex);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lag-probe");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::once, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void once() {
        try {
            progress.lag(probe.probe(progress.ownCommitted()), Instant.now());
            if (failing) {
                LOG.log(Level.INFO, "the lag probe reaches Kafka again");
                failing = false;
            }
        } catch (SourceException e) {
            progress.lagFailed("Kafka: " + e.getMessage());
            if (!failing) {
                LOG.log(Level.WARNING, e.getMessage() + "; the job's source is reported unavailable until Kafka answers"
                        + " (the engine retries by itself; check the brokers and the network to them)");
                failing = true;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the lag probe failed; the lag is reported as it was last seen", e);
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            try {
                timer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            probe.close();
        }
    }
}
