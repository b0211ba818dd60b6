package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A batch cut short to fit the heap is a part of its interval's: the next part follows at once, up to maxRecordsPerBatch. */
class TriggerIntervalTest {

    @Test
    void partsCutShortByTheHeapFollowAtOnceUntilTheIntervalReadMaxRecordsPerBatch() {
        TriggerInterval interval = new TriggerInterval(1000, 120);
        interval.batchStarting(10_000);
        assertThat(interval.recordsLeft()).isEqualTo(120);
        assertThat(interval.nextPartAtOnce(50, true)).isTrue();
        interval.batchStarting(10_100);
        assertThat(interval.recordsLeft()).isEqualTo(70);
        assertThat(interval.nextPartAtOnce(50, true)).isTrue();
        interval.batchStarting(10_200);
        assertThat(interval.recordsLeft()).as("what maxRecordsPerBatch leaves of the interval").isEqualTo(20);
        assertThat(interval.nextPartAtOnce(20, true)).as("120 read: the interval's maxRecordsPerBatch").isFalse();
        assertThat(interval.untilNextMs(10_300)).as("the interval began with its first part").isEqualTo(700);
        interval.end();

        interval.batchStarting(11_000);
        assertThat(interval.recordsLeft()).as("a new interval").isEqualTo(120);
        assertThat(interval.nextPartAtOnce(30, false)).as("a batch that took all there was").isFalse();
        assertThat(interval.untilNextMs(11_050)).isEqualTo(950);
        interval.end();

        interval.batchStarting(12_000);
        assertThat(interval.nextPartAtOnce(50, true)).as("a new interval counts afresh").isTrue();
        assertThat(interval.untilNextMs(13_500)).as("parts that outlast the interval: the next starts at once").isNegative();
    }
}
