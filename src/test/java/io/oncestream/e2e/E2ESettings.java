package io.oncestream.e2e;

import java.time.Duration;
import java.util.Map;

/** Settings shared by the end-to-end tests. */
final class E2ESettings {

    /** The operator's chart values: status polled every 2 s. */
    static final Map<String, String> OPERATOR = Map.of(
            "operator.pollInterval", "2s",
            "operator.pollTimeout", "1s");

    static final Duration POLL = Duration.ofSeconds(2);
    /** Long enough for a JVM to start in a container and drain a backlog on 2 shared cores. */
    static final Duration WAIT = Duration.ofSeconds(180);

    private E2ESettings() {
    }
}
