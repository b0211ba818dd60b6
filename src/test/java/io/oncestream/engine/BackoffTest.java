package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The pauses of docs/worker.md's Failures table, as sequences: no sleeping, no clock. */
class BackoffTest {

    @Test
    void theEnginesAndTheConnectionsPausesDoubleFromOneSecondToFive() {
        assertThat(pauses(new Backoff(1_000, 5_000), 6)).containsExactly(1_000L, 2_000L, 4_000L, 5_000L, 5_000L, 5_000L);
    }

    @Test
    void theSinksPausesDoubleFromAFifthOfASecondToFive() {
        assertThat(pauses(new Backoff(200, 5_000), 8))
                .containsExactly(200L, 400L, 800L, 1_600L, 3_200L, 5_000L, 5_000L, 5_000L);
    }

    @Test
    void aResetStartsFromTheFirstPauseAgain() {
        Backoff backoff = new Backoff(1_000, 5_000);
        pauses(backoff, 4);
        backoff.reset();
        assertThat(pauses(backoff, 3)).containsExactly(1_000L, 2_000L, 4_000L);
    }

    @Test
    void aCapEqualToTheFirstPauseKeepsItConstant() {
        assertThat(pauses(new Backoff(300, 300), 3)).containsExactly(300L, 300L, 300L);
    }

    @Test
    void aCapNearTheLargestLongDoesNotOverflow() {
        Backoff backoff = new Backoff(Long.MAX_VALUE / 2 + 1, Long.MAX_VALUE);
        assertThat(pauses(backoff, 3)).containsExactly(Long.MAX_VALUE / 2 + 1, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    @Test
    void aFirstPauseOfZeroOrACapBelowItIsRefused() {
        assertThatThrownBy(() -> new Backoff(0, 5_000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("first 0 ms");
        assertThatThrownBy(() -> new Backoff(1_000, 500)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max 500 ms");
    }

    private static List<Long> pauses(Backoff backoff, int count) {
        List<Long> pauses = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pauses.add(backoff.next());
        }
        return pauses;
    }
}
