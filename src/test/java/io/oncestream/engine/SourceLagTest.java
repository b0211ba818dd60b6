package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A partition's age: 0 with nothing behind, null (not 0) when records are behind and the oldest one's time was not read. */
class SourceLagTest {

    @Test
    void anAgeNotReadIsUnknownNotZero() {
        assertThat(new SourceLag(4, 10, 1_004L, true).ageMs(11_004L)).isEqualTo(10_000L);
        assertThat(new SourceLag(4, 10, 20_000L, true).ageMs(11_004L)).as("a clock behind the broker's").isZero();
        assertThat(new SourceLag(10, 10, null, true).ageMs(11_004L)).as("nothing behind").isZero();
        assertThat(new SourceLag(4, 10, null, true).ageMs(11_004L)).as("behind, oldest not read").isNull();
    }
}
