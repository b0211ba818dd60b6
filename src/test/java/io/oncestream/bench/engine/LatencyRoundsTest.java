package io.oncestream.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The plan and the verdicts of the latency side by side, without services. */
class LatencyRoundsTest {

    @Test
    void ratesAreAQuarterAndHalfOfTheEnginesMaximum() {
        assertThat(LatencyRounds.rates(40_000)).containsExactly(10_000, 20_000);
    }

    @Test
    void eachRoundRotatesTheOrderSoEachContenderRunsInEachPlace() {
        List<String> all = List.of("engine", "floor", "Spark");
        assertThat(LatencyRounds.order(all, 0)).containsExactly("engine", "floor", "Spark");
        assertThat(LatencyRounds.order(all, 1)).containsExactly("floor", "Spark", "engine");
        assertThat(LatencyRounds.order(all, 2)).containsExactly("Spark", "engine", "floor");
        assertThat(LatencyRounds.order(all, 3)).containsExactly("engine", "floor", "Spark");
        assertThat(LatencyRounds.order(List.of("engine", "floor"), 1)).containsExactly("floor", "engine");
    }

    @Test
    void aRatioThatCannotBeToldIsNaN() {
        assertThat(LatencyRounds.ratio(120, 100)).isEqualTo(1.2);
        assertThat(LatencyRounds.ratio(Double.NaN, 100)).isNaN();
        assertThat(LatencyRounds.ratio(120, Double.NaN)).isNaN();
        assertThat(LatencyRounds.ratio(120, 0)).isNaN();
    }

    @Test
    void theTargetsAreTheIssues() {
        assertThat(LatencyRounds.ENGINE_FLOOR_P99.atMost()).isEqualTo(1.2);
        assertThat(LatencyRounds.ENGINE_SPARK_P99.atMost()).isEqualTo(0.25);
        assertThat(LatencyRounds.ENGINE_FLOOR_CPU.atMost()).isEqualTo(1.2);
    }

    @Test
    void aLineGivesEachRoundsRatioTheMedianAndTheRoundsThatMetTheTarget() {
        assertThat(LatencyRounds.line("25 % of max", LatencyRounds.ENGINE_FLOOR_P99, new double[] {1.3, 0.95, 1.1}))
                .isEqualTo("  25 % of max: engine p99 / floor p99        : by round [1.30, 0.95, 1.10], median 1.10;"
                        + " target <= 1.20: met in 2 of 3 rounds (NOT MET)");
        assertThat(LatencyRounds.line("50 % of max", LatencyRounds.ENGINE_SPARK_P99, new double[] {0.1, 0.2, 0.25}))
                .isEqualTo("  50 % of max: engine p99 / Spark p99        : by round [0.10, 0.20, 0.25], median 0.20;"
                        + " target <= 0.25: met in 3 of 3 rounds");
    }

    @Test
    void aRoundWithoutARatioIsShownAndDoesNotMeetTheTarget() {
        assertThat(LatencyRounds.line("25 % of max", LatencyRounds.ENGINE_FLOOR_CPU, new double[] {1.0, Double.NaN, 0.9, 1.1}))
                .isEqualTo("  25 % of max: engine / floor CPU per record : by round [1.00, n/a, 0.90, 1.10], median 1.00;"
                        + " target <= 1.20: met in 3 of 4 rounds (NOT MET)");
        assertThat(LatencyRounds.line("25 % of max", LatencyRounds.ENGINE_FLOOR_CPU, new double[] {Double.NaN}))
                .isEqualTo("  25 % of max: engine / floor CPU per record : by round [n/a], median n/a;"
                        + " target <= 1.20: met in 0 of 1 rounds (NOT MET)");
    }
}
