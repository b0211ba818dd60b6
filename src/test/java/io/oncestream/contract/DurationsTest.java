package io.oncestream.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void readsEachUnitAndTheirSums() {
        Map.of("500ms", 500L, "1s", 1_000L, "1m", 60_000L, "2h", 7_200_000L, "1m30s", 90_000L, "2h30m", 9_000_000L,
                "1s500ms", 1_500L, "0s", 0L).forEach((text, ms) -> {
                    assertThat(Durations.isDuration(text)).as(text).isTrue();
                    assertThat(Durations.millis(text)).as(text).isEqualTo(ms);
                });
    }

    @Test
    void refusesAnythingElseByName() {
        for (String bad : new String[] {"", "1", "s", "1d", "1s ", " 1s", "-1s", "1.5s", "5mss", "1s,2s", "1S"}) {
            assertThat(Durations.isDuration(bad)).as(bad).isFalse();
            assertThatThrownBy(() -> Durations.millis(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("'" + bad + "' is not a duration like 500ms, 1s, 1m");
        }
        assertThat(Durations.isDuration(null)).isFalse();
    }

    @Test
    void theDefaultsInMillisecondsAreTheirTextsRead() {
        assertThat(JobDefaults.TRIGGER_INTERVAL_MS).isEqualTo(1_000);
        assertThat(JobDefaults.RESTART_MAX_BACKOFF_MS).isEqualTo(300_000);
    }

    @Test
    void aDurationLongerThanMillisecondsHoldIsRefusedNotWrappedAround() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Durations.millis("99999999999999999999s"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than any duration can be");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Durations.millis("9223372036854775807h"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than any duration can be");
    }
}
