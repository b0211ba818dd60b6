package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Rates over a window of wall-clock time, on a clock the test sets. */
class RateWindowTest {

    @Test
    void aRateIsTheGrowthOverTheLastWindowAndDropsToZeroWhenTheCountStops() {
        RateWindow w = new RateWindow(60_000);
        w.sample(0, 0);
        assertThat(w.perSecond(500, 100)).as("less than a second: no rate yet").isNull();
        // 500 records a second for two minutes, sampled at each one-second batch.
        for (long t = 1_000; t <= 120_000; t += 1_000) {
            w.sample(t, t / 2);
        }
        assertThat(w.perSecond(120_000, 60_000)).isEqualTo(500.0);
        // Young: while the count is younger than the window, the rate is over its whole life.
        RateWindow young = new RateWindow(60_000);
        young.sample(10_000, 0);
        young.sample(20_000, 5_000);
        assertThat(young.perSecond(20_000, 5_000)).isEqualTo(500.0);
        // The count stops growing at 120 s (a sink outage): no sample, and the rate falls to 0 within a window.
        assertThat(w.perSecond(150_000, 60_000)).as("half a window later: half the records").isEqualTo(250.0);
        assertThat(w.perSecond(180_000, 60_000)).isEqualTo(0.0);
        assertThat(w.perSecond(600_000, 60_000)).isEqualTo(0.0);
    }

    @Test
    void aBurstCountsOverTheWholeWindowNotAsTheSpeedOfOneBatch() {
        RateWindow w = new RateWindow(60_000);
        w.sample(0, 0);
        w.sample(59_000, 0);
        w.sample(60_000, 30_000); // 30,000 records in a batch of one second
        assertThat(w.perSecond(60_000, 30_000)).isEqualTo(500.0);
    }
}
