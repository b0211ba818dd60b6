package io.oncestream.testing;

import java.time.Duration;
import java.util.List;

/** {@code kill -SIGNAL pid} for fault tests (pausing and resuming processes of the stack and its pods). */
public final class Signals {

    private Signals() {
    }

    /** Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to {@code pid}; fails if kill does. */
    public static void send(String signal, long pid) {
        new Command(List.of("kill", "-" + signal, Long.toString(pid))).run(Duration.ofSeconds(10)).orThrow();
    }
}
