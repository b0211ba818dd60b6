package io.oncestream.operator.model;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Objects;

import io.oncestream.api.StreamJobSpec;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.engine.config.JobConfig;

/**
 * The lag-driven autoscaler of {@code spec.autoscaling} (docs/operator.md, Autoscaling), as a
 * pure function of the spec, the job's last status and the clock. It only judges a job that is
 * {@code Running} with the number of workers it chose (not while it starts, rescales, or cannot
 * reach Cassandra or Kafka, which more workers would not help), and:
 * <ul>
 * <li>scales <b>up</b> when the oldest record not committed has stayed older than
 * {@code targetLagSeconds} for {@code scaleUpAfterSeconds}: to
 * {@code ceil(arriving / (capacityPerWorker x targetUtilization))} workers, at least one more;</li>
 * <li>scales <b>down</b> when, for {@code scaleDownAfterSeconds}, the lag has stayed under half
 * the target and one worker fewer would be at most 80 % of the target utilization: to
 * {@code max(minParallelism, ceil(arriving / (capacityPerWorker x targetUtilization)))}, at
 * least one fewer;</li>
 * <li>never within {@code cooldownSeconds} of its last rescale, never outside
 * [{@code minParallelism}, {@code maxParallelism}], never above the partition count.</li>
 * </ul>
 * The gap between the up and the down conditions, the windows and the cool-down keep it from
 * flapping. A worker's capacity is the speed of its batches (records per second of batch time),
 * capped by what its trigger lets it read: {@code maxRecordsPerBatch} per trigger interval.
 */
public final class Autoscaler {

    /** The fraction of the target utilization one worker fewer must stay under to scale down. */
    static final double DOWN_MARGIN = 0.8;

    /**
     * @param parallelism the number of workers the job should run with now
     * @param state       the autoscaler's state for the status
     * @param watching    whether a window is open (the job should be looked at again soon)
     */
    public record Decision(int parallelism, StreamJobStatus.Autoscaler state, boolean watching) {
    }

    private Autoscaler() {
    }

    /**
     * @param running the number of workers the applied configuration runs, or null if none is applied
     * @param config  the job's worker configuration (batch size and trigger)
     */
    public static Decision decide(StreamJobSpec spec, StreamJobStatus previous, Integer running, JobConfig config, Instant now) {
        StreamJobSpec.Autoscaling a = spec.autoscaling;
        int min = a.minParallelism == null ? 1 : a.minParallelism;
        int max = a.maxParallelism;
        int specParallelism = spec.parallelism == null ? 1 : spec.parallelism;
        StreamJobStatus.Autoscaler before = previous == null ? null : previous.autoscaler;
        StreamJobStatus.Autoscaler st = copy(before);
        String at = now.truncatedTo(ChronoUnit.SECONDS).toString();

        if (before == null || before.parallelism == null || !Objects.equals(before.specParallelism, specParallelism)) {
            st.parallelism = clamp(specParallelism, min, max);
            st.specParallelism = specParallelism;
            st.lagAboveTargetSince = null;
            st.fewerWouldDoSince = null;
            st.lastDecision = (before == null || before.parallelism == null ? "starting with " : "spec.parallelism is "
                    + specParallelism + ": ") + st.parallelism + " workers";
            return new Decision(st.parallelism, st, false);
        }
        int partitions = partitions(previous);
        int upper = partitions > 0 ? Math.min(max, partitions) : max;
        int p = clamp(before.parallelism, min, Math.max(min, upper));
        if (p != before.parallelism) {
            st.parallelism = p;
            st.lastDecision = before.parallelism + " -> " + p + " workers: within [" + min + ", " + upper + "]";
            return new Decision(p, st, false);
        }
        boolean steady = previous.phase == StreamJobStatus.Phase.Running && running != null && running == p;
        if (!steady) {
            st.lagAboveTargetSince = null;
            st.fewerWouldDoSince = null;
            return new Decision(p, st, false);
        }

        Long lag = previous.lagSeconds;
        Long arriving = previous.rates == null ? null : previous.rates.incomingRecordsPerSecond;
        Double capacity = capacityPerWorker(previous, p, config);
        st.capacityPerWorker = capacity == null ? null : Math.round(capacity);
        double utilization = (a.targetUtilizationPercent == null ? 70 : a.targetUtilizationPercent) / 100.0;
        int target = a.targetLagSeconds == null ? 60 : a.targetLagSeconds;

        boolean behind = lag != null && lag > target;
        boolean fewerWouldDo = p > min && lag != null && lag * 2 <= target && arriving != null && capacity != null
                && arriving <= capacity * (p - 1) * utilization * DOWN_MARGIN;
        if (lag == null) {
            // The lag's age is not known for a moment (a worker's first probe): neither a sign that
            // the job caught up nor that it fell behind, so both clocks stand as they were.
            st.lagAboveTargetSince = before.lagAboveTargetSince;
            st.fewerWouldDoSince = before.fewerWouldDoSince;
        } else {
            st.lagAboveTargetSince = behind ? (before.lagAboveTargetSince == null ? at : before.lagAboveTargetSince) : null;
            st.fewerWouldDoSince = fewerWouldDo ? (before.fewerWouldDoSince == null ? at : before.fewerWouldDoSince) : null;
        }

        boolean cooling = before.lastScaleTime != null
                && now.isBefore(Instant.parse(before.lastScaleTime).plusSeconds(seconds(a.cooldownSeconds, 300)));
        String signals = "lag " + lag + " s (target " + target + " s), " + (arriving == null ? "?" : arriving)
                + " records/s arriving, " + (capacity == null ? "?" : Math.round(capacity)) + " records/s per worker";
        if (behind && held(st.lagAboveTargetSince, now, seconds(a.scaleUpAfterSeconds, 60))) {
            int need = arriving != null && capacity != null && capacity > 0 ? (int) Math.ceil(arriving / (capacity * utilization)) : p + 1;
            int to = clamp(Math.max(need, p + 1), min, Math.max(min, upper));
            if (to == p) {
                st.lastDecision = "stays at " + p + " workers, the most it may have (maxParallelism " + max + ", " + partitions
                        + " partitions): " + signals;
            } else if (!cooling) {
                return scaled(st, p, to, at, "up: " + signals + " for " + seconds(a.scaleUpAfterSeconds, 60) + " s");
            }
        } else if (fewerWouldDo && held(st.fewerWouldDoSince, now, seconds(a.scaleDownAfterSeconds, 300)) && !cooling) {
            int need = capacity > 0 ? (int) Math.ceil(arriving / (capacity * utilization)) : min;
            int to = clamp(Math.min(Math.max(need, min), p - 1), min, Math.max(min, upper));
            return scaled(st, p, to, at, "down: " + signals + "; " + to + " workers stay under " + Math.round(utilization * 100)
                    + " % busy");
        }
        return new Decision(p, st, st.lagAboveTargetSince != null || st.fewerWouldDoSince != null);
    }

    private static Decision scaled(StreamJobStatus.Autoscaler st, int from, int to, String at, String why) {
        st.parallelism = to;
        st.lastScaleTime = at;
        st.rescales = (st.rescales == null ? 0 : st.rescales) + 1;
        st.lagAboveTargetSince = null;
        st.fewerWouldDoSince = null;
        st.lastDecision = from + " -> " + to + " workers, " + why;
        return new Decision(to, st, false);
    }

    /**
     * Records per second one worker can read: its batches' speed, capped by its trigger
     * ({@code maxRecordsPerBatch} per interval); null before any batch.
     */
    static Double capacityPerWorker(StreamJobStatus status, int workers, JobConfig config) {
        Long speed = status.rates == null ? null : status.rates.batchRecordsPerSecond;
        double perWorker = speed == null || speed <= 0 ? Double.NaN : speed / (double) workers;
        double limit = config.trigger().intervalMs() > 0
                ? config.source().maxRecordsPerBatch() * 1000.0 / config.trigger().intervalMs() : Double.POSITIVE_INFINITY;
        double capacity = Double.isNaN(perWorker) ? limit : Math.min(perWorker, limit);
        return Double.isInfinite(capacity) || Double.isNaN(capacity) ? null : capacity;
    }

    private static int partitions(StreamJobStatus status) {
        Map<String, Map<String, Long>> byTopic = status.partitionLag != null ? status.partitionLag : status.committedOffsets;
        return byTopic == null ? 0 : byTopic.values().stream().mapToInt(Map::size).sum();
    }

    private static boolean held(String since, Instant now, long seconds) {
        return since != null && !now.isBefore(Instant.parse(since).plus(Duration.ofSeconds(seconds)));
    }

    private static long seconds(Integer value, int otherwise) {
        return value == null ? otherwise : value;
    }

    private static int clamp(int v, int min, int max) {
        return Math.max(min, Math.min(max, v));
    }

    private static StreamJobStatus.Autoscaler copy(StreamJobStatus.Autoscaler a) {
        StreamJobStatus.Autoscaler c = new StreamJobStatus.Autoscaler();
        if (a != null) {
            c.parallelism = a.parallelism;
            c.specParallelism = a.specParallelism;
            c.capacityPerWorker = a.capacityPerWorker;
            c.lagAboveTargetSince = a.lagAboveTargetSince;
            c.fewerWouldDoSince = a.fewerWouldDoSince;
            c.lastScaleTime = a.lastScaleTime;
            c.rescales = a.rescales;
            c.lastDecision = a.lastDecision;
        }
        return c;
    }
}
