package io.oncestream.bench.engine;

import java.util.Arrays;
import java.util.List;

/** How the engine benchmark's modes print: progress lines, ratios, medians. */
final class Figures {

    private Figures() {
    }

    static void log(String format, Object... args) {
        System.out.printf("[bench] " + format + "%n", args);
    }

    static String fmt(double[] ratios) {
        return Arrays.stream(ratios).mapToObj(r -> String.format("%.2f", r)).toList().toString();
    }

    static double median(double[] sorted) {
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /** The median of one column of per-run results. */
    static double medianOf(List<double[]> results, int column) {
        return median(results.stream().mapToDouble(r -> r[column]).sorted().toArray());
    }
}
