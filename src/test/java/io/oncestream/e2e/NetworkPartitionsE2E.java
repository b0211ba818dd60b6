package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.NetworkFaults;

/**
 * Network partitions while records keep arriving, made inside the stack's own network namespace
 * (deploy/local/faults.sh): packets dropped, not refused, so every client times out. The workers
 * cut off from Cassandra for 30 s (Degraded, SinkAvailable=False, the lag growing; back by
 * itself), cut off from Kafka for 30 s (SourceAvailable=False; the lag still grows, read by the
 * operator), a slow broker (paused half of every second for 30 s: batches go on committing), a
 * broker restart with a batch in flight, and the operator cut off from the API server longer
 * than its lease (it writes nothing, loses the lease and exits; its successor takes the lease
 * before it writes anything and status resumes). Through all of it the consumer group never
 * runs ahead of the table, and the table ends exactly as the records say.
 */
class NetworkPartitionsE2E extends E2ETest {

    private static final Duration PARTITION = Duration.ofSeconds(30);
    /** Longer than the chart's lease (15 s) and renew deadline (10 s) together. */
    private static final Duration OPERATOR_PARTITION = Duration.ofSeconds(40);

    private final List<String> ahead = new ArrayList<>();
    private final TreeSet<String> phasesSeen = new TreeSet<>();

    @Test
    void partitionsASlowBrokerAndABrokerRestartLoseNothing() throws Exception {
        operator.upgrade(Map.of("leaderElection.enabled", "true"), E2ESettings.WAIT);
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-partition", 4, 3000);
        job.produce(1000);
        Map<String, String> edits = new LinkedHashMap<>(E2EJob.SHORT_BATCHES);
        job.apply(edits);
        job.awaitStatus("Running", E2ESettings.WAIT, s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);

        try (NetworkFaults faults = new NetworkFaults()) {
            try (Producing producing = new Producing(job, 100, Duration.ofMillis(250))) {
                cutOff(job, faults, NetworkFaults.CASSANDRA, ConditionType.SinkAvailable);
                cutOff(job, faults, NetworkFaults.KAFKA, ConditionType.SourceAvailable);
                slowBroker(job);
            }

            // A broker restart with a backlog being read and written.
            job.produce(2000);
            long before = job.status().batchId;
            kafka.restart();
            job.awaitStatus("batches committing after the broker's restart", E2ESettings.WAIT,
                    s -> s.batchId != null && s.batchId > before + 2 && s.phase == Phase.Running);
            check(job);

            try (Producing producing = new Producing(job, 100, Duration.ofMillis(250))) {
                operatorCutOff(job, faults);
            }
        }
        job.awaitExactTable(E2ESettings.WAIT);
        check(job);
        System.out.println("[e2e] phases seen: " + phasesSeen);
        assertThat(ahead).as("consumer-group offsets ahead of the table at some moment").isEmpty();
        assertThat(phasesSeen).as("no fault here is permanent").doesNotContain("Failed");
    }

    /**
     * Drops the packets of every worker to {@code port} for {@link #PARTITION}: the job goes
     * Degraded with {@code condition} False, its lag keeps growing, and after the partition
     * heals it is Running again by itself.
     */
    private void cutOff(E2EJob job, NetworkFaults faults, int port, ConditionType condition) throws Exception {
        List<String> ips = job.pods().stream().map(Pod::getStatus).map(s -> s.getPodIP()).toList();
        assertThat(ips).as("worker pod addresses").hasSize(2).doesNotContainNull();
        long start = System.nanoTime();
        ips.forEach(ip -> faults.drop(ip, port));
        StreamJobStatus degraded = job.awaitStatus("Degraded with " + condition + "=False while the workers cannot reach port "
                + port, PARTITION.plusSeconds(30), s -> {
                    sample(job, s);
                    return s.phase == Phase.Degraded && conditionIs(s, condition, "False");
                });
        System.out.printf("[e2e] port %d dropped: Degraded %.1f s later: %s%n", port, (System.nanoTime() - start) / 1e9,
                degraded.condition(condition).orElseThrow().message);
        StreamJobStatus first = job.awaitStatus("a lag while cut off from port " + port, PARTITION,
                s -> s.lag != null && s.lagSeconds != null);
        Instant firstSeen = Instant.now();
        StreamJobStatus grown = job.awaitStatus("the lag grown 10 s later", PARTITION, s -> {
            sample(job, s);
            return Instant.now().isAfter(firstSeen.plusSeconds(10)) && s.lag != null && s.lag > first.lag
                    && conditionIs(s, condition, "False");
        });
        System.out.printf("[e2e] port %d dropped: lag %d records / %d s, then %d records / %d s%n", port, first.lag,
                first.lagSeconds, grown.lag, grown.lagSeconds);
        long left = PARTITION.toNanos() - (System.nanoTime() - start);
        while (left > 0) {
            check(job);
            Thread.sleep(Math.min(2_000, left / 1_000_000 + 1)); // sampling while the fault lasts, not a synchronization
            left = PARTITION.toNanos() - (System.nanoTime() - start);
        }
        faults.healAll();
        long healed = System.nanoTime();
        long batch = job.status().batchId;
        job.awaitStatus("Running again after port " + port + " is reachable", E2ESettings.WAIT, s -> {
            sample(job, s);
            return s.phase == Phase.Running && conditionIs(s, condition, "True") && s.batchId != null && s.batchId > batch;
        });
        System.out.printf("[e2e] port %d reachable again: Running and committing %.1f s later%n", port,
                (System.nanoTime() - healed) / 1e9);
        job.awaitStatus("caught up after the partition of port " + port, E2ESettings.WAIT,
                s -> s.lagSeconds != null && s.lagSeconds < 10);
    }

    /** The broker paused for 500 ms of every second, 30 s long: the job goes on committing. */
    private void slowBroker(E2EJob job) throws Exception {
        long before = job.status().batchId;
        List<String> phases = new ArrayList<>();
        long start = System.nanoTime();
        try (AutoCloseable slow = kafka.slow(Duration.ofMillis(500), Duration.ofSeconds(1))) {
            while (System.nanoTime() - start < PARTITION.toNanos()) {
                StreamJobStatus s = job.status();
                sample(job, s);
                phases.add(s.phase + (conditionIs(s, ConditionType.SourceAvailable, "False") ? "/SourceAvailable=False" : ""));
                check(job);
                Thread.sleep(2_000); // sampling while the fault lasts, not a synchronization
            }
        }
        long after = job.status().batchId;
        System.out.printf("[e2e] slow broker for %d s: batches %d -> %d; phases %s%n", PARTITION.toSeconds(), before, after,
                phases);
        assertThat(after).as("batches committed while the broker was slow").isGreaterThan(before + 2);
        job.awaitStatus("caught up after the slow broker", E2ESettings.WAIT,
                s -> s.phase == Phase.Running && s.lagSeconds != null && s.lagSeconds < 10);
    }

    /**
     * The operator's packets to the API server dropped for longer than its lease: no write of
     * its reaches the API server meanwhile, it gives up the lease and exits, and after the
     * partition heals the operator takes the lease again before it writes anything else; the
     * status goes on. The workers need neither: rows keep landing in Cassandra meanwhile.
     */
    private void operatorCutOff(E2EJob job, NetworkFaults faults) throws Exception {
        AuditLog audit = kube.auditLog();
        int restarts = operator.restarts();
        String ip = operator.pod().getStatus().getPodIP();
        int rowsBefore = job.rows().size();
        long batchBefore = job.status().batchId;
        long cut = audit.mark();
        faults.drop(ip, NetworkFaults.API_SERVER);
        Instant dropped = Instant.now();
        long start = System.nanoTime();
        String lastWords = null;
        double gaveUp = 0;
        while (System.nanoTime() - start < OPERATOR_PARTITION.toNanos()) {
            check(job);
            if (lastWords == null && operator.restarts() > restarts) {
                // The first container's log, before a successor that cannot start either replaces it.
                lastWords = operator.previousLog();
                gaveUp = (System.nanoTime() - start) / 1e9;
            }
            Thread.sleep(1_000); // sampling while the fault lasts, not a synchronization
        }
        int rowsDuring = job.rows().size();
        long heal = audit.mark();
        faults.healAll();
        Instant healedAt = Instant.now();
        long healed = System.nanoTime();
        // By when the API server received them (the log is in the order requests completed; a
        // watch opened before the cut may end during it).
        List<AuditLog.Request> during = audit.since(cut, r -> r.user().equals(operator.user()) && !"watch".equals(r.verb())
                && r.received() != null && r.received().isAfter(dropped.plusSeconds(1)) && r.received().isBefore(healedAt));
        assertThat(during).as("requests of the operator that reached the API server while cut off").isEmpty();
        assertThat(rowsDuring).as("rows keep landing while the operator is cut off").isGreaterThan(rowsBefore);

        job.awaitStatus("status resumed after the operator's partition", E2ESettings.WAIT,
                s -> s.batchId != null && s.batchId > batchBefore + 2 && s.phase == Phase.Running);
        System.out.printf("[e2e] operator reachable again: status resumed %.1f s later%n", (System.nanoTime() - healed) / 1e9);
        System.out.printf("[e2e] operator cut off from the API server: its container ended %.1f s after the cut%n", gaveUp);
        assertThat(lastWords).as("the cut-off operator's last words, before the partition healed")
                .contains("lost the leader-election lease");
        // (An access review is a question, posted: the operator asks what it may do when it starts.)
        // Only writes that took effect count: the cut-off container's last request, sent before it
        // ended, can reach the API server after the heal (the kernel retransmits what an ended
        // process left in its socket) without the rest of it, and is timed out there (a CI run saw
        // "create events ... -> 504" first).
        List<AuditLog.Request> writes = new ArrayList<>(audit.since(heal, r -> r.user().equals(operator.user()) && r.isWrite()
                && !r.resource().endsWith("reviews") && r.received() != null && r.received().isAfter(healedAt)
                && r.code() >= 200 && r.code() < 300));
        writes.sort(java.util.Comparator.comparing(AuditLog.Request::received));
        System.out.println("[e2e] the operator's first writes after the partition: " + writes.stream().limit(5).toList());
        assertThat(writes).as("the operator's writes after the partition").isNotEmpty();
        assertThat(writes.get(0).resource()).as("the first write after the partition takes the lease").isEqualTo("leases");
    }

    private static boolean conditionIs(StreamJobStatus s, ConditionType type, String value) {
        return s.condition(type).filter(c -> value.equals(c.status)).isPresent();
    }

    private void sample(E2EJob job, StreamJobStatus s) {
        if (s != null && s.phase != null) {
            phasesSeen.add(s.phase.name());
        }
    }

    /** The exactly-once check of the consumer group at this moment (kept for the end). */
    private void check(E2EJob job) {
        ahead.addAll(job.groupOffsetsAheadOfTable());
    }
}
