package io.oncestream.bench.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The plan and the verdicts of the latency side by side, without services: the rates (shares of
 * the engine's maximum), the order of the contenders in each round (rotated, so that none always
 * runs first after the previous rate's last run, or always last on a warmer Cassandra), and the
 * per-round ratios held against the targets of issue #31.
 */
final class LatencyRounds {

    /** The rates, as shares of the engine's maximum wide rate measured in the same run. */
    static final double[] RATE_SHARES = {0.25, 0.50};

    /** A ratio of two contenders' figures in one round, and the most it may be. */
    record Target(String label, double atMost) {
    }

    static final Target ENGINE_FLOOR_P99 = new Target("engine p99 / floor p99", 1.2);
    static final Target ENGINE_SPARK_P99 = new Target("engine p99 / Spark p99", 0.25);
    static final Target ENGINE_FLOOR_CPU = new Target("engine / floor CPU per record", 1.2);
    /** With {@code --baseline}: the earlier build against the floor (the same target), and the change itself (at most as slow). */
    static final Target BEFORE_FLOOR_P99 = new Target("before p99 / floor p99", 1.2);
    static final Target ENGINE_BEFORE_P99 = new Target("engine p99 / before p99", 1.0);
    static final Target ENGINE_BEFORE_P50 = new Target("engine p50 / before p50", 1.0);

    private LatencyRounds() {
    }

    /** The rates of the measured runs for an engine maximum of {@code maxRate} records/s, in {@link #RATE_SHARES} order. */
    static double[] rates(double maxRate) {
        return Arrays.stream(RATE_SHARES).map(share -> share * maxRate).toArray();
    }

    /** The order of the contenders in round {@code round} (from 0): the list rotated left by the round. */
    static <T> List<T> order(List<T> contenders, int round) {
        List<T> order = new ArrayList<>(contenders.size());
        for (int i = 0; i < contenders.size(); i++) {
            order.add(contenders.get((round + i) % contenders.size()));
        }
        return order;
    }

    /** {@code a / b}, NaN when either is missing (NaN) or {@code b} is not positive: a ratio that cannot be told. */
    static double ratio(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) || b <= 0 ? Double.NaN : a / b;
    }

    /**
     * A result line: the ratio in each round, in round order ({@code n/a} where it could not be
     * told), their median, and in how many rounds it met the target.
     */
    static String line(String rate, Target target, double[] byRound) {
        List<String> values = new ArrayList<>();
        double[] told = Arrays.stream(byRound).filter(r -> !Double.isNaN(r)).sorted().toArray();
        for (double r : byRound) {
            values.add(Double.isNaN(r) ? "n/a" : String.format("%.2f", r));
        }
        long met = Arrays.stream(told).filter(r -> r <= target.atMost()).count();
        return String.format("  %s: %-30s: by round %s, median %s; target <= %.2f: met in %d of %d rounds%s", rate, target.label(),
                values, told.length == 0 ? "n/a" : String.format("%.2f", Figures.median(told)), target.atMost(), met,
                byRound.length, met == byRound.length ? "" : " (NOT MET)");
    }
}
