package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class WorkerOptionsTest {

    private static final String[] BASE = {"--config", "job.json", "--checkpoint", "/checkpoint"};

    private static String[] with(String... more) {
        String[] args = java.util.Arrays.copyOf(BASE, BASE.length + more.length);
        System.arraycopy(more, 0, args, BASE.length, more.length);
        return args;
    }

    @Test
    void aDrainedWorkerExitsUnlessToldToWait() {
        assertThat(WorkerOptions.parse(BASE, Map.of()).waitWhenDone()).isFalse();
        assertThat(WorkerOptions.parse(with("--when-done", "exit"), Map.of()).waitWhenDone()).isFalse();
        assertThat(WorkerOptions.parse(with("--when-done", "wait"), Map.of()).waitWhenDone()).isTrue();
        assertThatThrownBy(() -> WorkerOptions.parse(with("--when-done", "linger"), Map.of()))
                .hasMessageStartingWith("--when-done takes exit or wait, not linger");
    }

    @Test
    void theCheckpointLockIsWaitedForTenMinutesUnlessToldOtherwise() {
        assertThat(WorkerOptions.parse(BASE, Map.of()).lockWait()).isEqualTo(java.time.Duration.ofMinutes(10));
        assertThat(WorkerOptions.parse(with("--lock-wait", "30"), Map.of()).lockWait()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThatThrownBy(() -> WorkerOptions.parse(with("--lock-wait", "-1"), Map.of()))
                .hasMessageStartingWith("--lock-wait must not be negative");
        assertThatThrownBy(() -> WorkerOptions.parse(with("--lock-wait", "soon"), Map.of()))
                .hasMessageStartingWith("--lock-wait: 'soon' is not a number");
    }

    @Test
    void theIndexComesFromThePodNameUnlessGiven() {
        assertThat(WorkerOptions.parse(BASE, Map.of("POD_NAME", "paid-orders-2")).workerIndex()).isEqualTo(2);
        assertThat(WorkerOptions.parse(with("--worker-index", "1"), Map.of("POD_NAME", "paid-orders-2")).workerIndex()).isEqualTo(1);
    }
}
