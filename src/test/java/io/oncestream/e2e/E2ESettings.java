package io.oncestream.e2e;

import java.time.Duration;
import java.util.Map;

/** Settings shared by the end-to-end tests. */
final class E2ESettings {

    /** The operator's settings: status polled every 2 s, short leases so a restarted operator leads at once. */
    static final Map<String, String> OPERATOR = Map.of(
            "oncestream.operator.poll-interval", "2s",
            "oncestream.operator.poll-timeout", "1s",
            "oncestream.operator.leader-election.lease-duration", "6s",
            "oncestream.operator.leader-election.renew-deadline", "4s",
            "oncestream.operator.leader-election.retry-period", "1s");

    static final Duration POLL = Duration.ofSeconds(2);
    /** Long enough for a JVM to start in a container and drain a backlog on 2 shared cores. */
    static final Duration WAIT = Duration.ofSeconds(180);

    private E2ESettings() {
    }
}
