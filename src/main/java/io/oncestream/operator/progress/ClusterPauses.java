package io.oncestream.operator.progress;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.oncestream.engine.Backoff;

/**
 * The Kafka clusters the operator's lag probes go to, by bootstrap string, and whether probes to
 * each are paused. After {@value #FAILURES_TO_PAUSE} failures in a row against one cluster,
 * whichever jobs they were for, every probe to it waits out a pause, which doubles while the
 * cluster keeps failing: the jobs of a cluster that is down cost a few tries a minute together,
 * not one each, and one warning rather than one per job.
 */
final class ClusterPauses {

    static final int FAILURES_TO_PAUSE = 2;

    private static final Logger LOG = Logger.getLogger(ClusterPauses.class);

    /** One cluster's failures; guarded by itself. */
    private static final class Cluster {
        final Backoff pauses;
        int failuresInARow;
        boolean paused;
        long resumesAtNanos;

        Cluster(Backoff pauses) {
            this.pauses = pauses;
        }
    }

    private final Map<String, Cluster> clusters = new ConcurrentHashMap<>();
    private final Duration first;
    private final Duration max;

    ClusterPauses(Duration first, Duration max) {
        this.first = first;
        this.max = max;
    }

    /** Milliseconds until probes to {@code bootstrap} may run again; 0 when they may now. */
    long pausedFor(String bootstrap) {
        Cluster cluster = clusters.get(bootstrap);
        if (cluster == null) {
            return 0;
        }
        synchronized (cluster) {
            long left = cluster.resumesAtNanos - System.nanoTime();
            return cluster.paused && left > 0 ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)) : 0;
        }
    }

    /**
     * A probe to {@code bootstrap} failed: the cluster is paused at the second failure in a row,
     * and again, for twice as long, at each failure after a pause. A probe that started before the
     * pause and fails during it does not lengthen it.
     */
    void failed(String bootstrap, String why) {
        Cluster cluster = clusters.computeIfAbsent(bootstrap, b -> new Cluster(new Backoff(first.toMillis(), max.toMillis())));
        synchronized (cluster) {
            cluster.failuresInARow++;
            long now = System.nanoTime();
            if (cluster.failuresInARow < FAILURES_TO_PAUSE || (cluster.paused && now - cluster.resumesAtNanos < 0)) {
                return;
            }
            long pauseMs = cluster.pauses.next();
            cluster.resumesAtNanos = now + TimeUnit.MILLISECONDS.toNanos(pauseMs);
            if (!cluster.paused) {
                cluster.paused = true;
                LOG.warnf("Kafka at %s: %d lag probes in a row failed (%s); the operator pauses its lag probes of every job "
                        + "on it, %d s at first, up to %d s while it keeps failing", bootstrap, cluster.failuresInARow, why,
                        pauseMs / 1000, max.toSeconds());
            }
        }
    }

    /** A probe to {@code bootstrap} answered: no pause, and the next failure starts counting again. */
    void answered(String bootstrap) {
        Cluster cluster = clusters.get(bootstrap);
        if (cluster == null) {
            return;
        }
        synchronized (cluster) {
            if (cluster.paused) {
                LOG.infof("Kafka at %s answers the operator's lag probes again; they run as planned", bootstrap);
            }
            cluster.paused = false;
            cluster.failuresInARow = 0;
            cluster.pauses.reset();
        }
    }

    /** Forgets the clusters no registered job uses any more. */
    void retainOnly(Set<String> bootstraps) {
        clusters.keySet().retainAll(bootstraps);
    }
}
