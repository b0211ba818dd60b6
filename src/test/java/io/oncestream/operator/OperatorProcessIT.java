package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;

import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.OperatorProcess;

/**
 * The operator as a process: only the lease holder reconciles, a standby takes over after
 * kill -9 and after SIGTERM (the leader hands the lease over), and a configured namespace list
 * is all it watches.
 */
class OperatorProcessIT extends OperatorITBase {
    /** Whether {@code operator} is the lease holder started with {@link #SETTINGS}, as every test here begins. */
    private static boolean leaderAsStarted = true;

    @BeforeEach
    void aLeaderWithTheDefaultSettings() {
        if (!leaderAsStarted || !operator.isAlive()) {
            operator.close();
            operator = install.startLeading("operator-leader.log", SETTINGS, WAIT);
            leaderAsStarted = true;
        }
    }

    @Test
    void onlyTheLeaseHolderReconcilesAndAStandbyTakesOver() throws Exception {
        Lease lease = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get();
        String leader = lease.getSpec().getHolderIdentity();
        assertThat(operator.log()).contains("as " + leader);

        OperatorProcess standby = install.start("operator-2.log", SETTINGS);
        try {
            standby.awaitOutput("leader election on lease", WAIT);
            String ns = kube.createNamespace("op-failover");
            apply(ns, "first", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "first", s -> s.phase == Phase.Pending);
            assertThat(standby.log()).as("the standby does not reconcile").doesNotContain("Started event processing");

            operator.kill9();
            standby.awaitOutput("Started event processing for controller: streamjob", WAIT);
            String newLeader = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                    .getSpec().getHolderIdentity();
            assertThat(newLeader).isNotEqualTo(leader);
            apply(ns, "second", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "second", s -> s.phase == Phase.Pending);
        } finally {
            operator.close();
            operator = standby;
        }
    }

    /**
     * SIGTERM to a leader: it stops (the SDK's stop-leading exit used to deadlock in the shutdown
     * hook, so the process never ended), releases the lease on its way out, and the standby takes
     * over at its next retry instead of waiting for the lease to expire.
     */
    @Test
    void aLeaderStoppedWithSigtermExitsAndHandsTheLeaseOver() throws Exception {
        String leader = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                .getSpec().getHolderIdentity();
        OperatorProcess standby = install.start("operator-4.log", SETTINGS);
        try {
            standby.awaitOutput("the leader is " + leader, WAIT);
            long start = System.nanoTime();
            // far above the lease (6 s): before the fix the process did not exit at all
            operator.terminate(Duration.ofSeconds(30));
            long exitedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(operator.log()).contains("released lease " + OPERATOR_NAMESPACE + "/oncestream-operator")
                    .doesNotContain("lost the leader-election lease");
            String holder = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                    .getSpec().getHolderIdentity();
            assertThat(holder).as("the lease after the leader stopped").isNotEqualTo(leader);
            standby.awaitOutput("Started event processing for controller: streamjob", WAIT);
            long ledMs = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("[operator] SIGTERM to exit %d ms, to the standby leading %d ms (lease 6 s, retry 1 s)%n",
                    exitedMs, ledMs);
            String ns = kube.createNamespace("op-handover");
            apply(ns, "after-handover", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "after-handover", s -> s.phase == Phase.Pending);
        } finally {
            operator.close();
            operator = standby;
        }
    }

    @Test
    void aConfiguredNamespaceListIsAllThatIsWatched() throws Exception {
        String watched = kube.createNamespace("op-watched");
        String other = kube.createNamespace("op-other");
        operator.close();
        leaderAsStarted = false;
        Map<String, String> settings = new java.util.HashMap<>(SETTINGS);
        settings.put("quarkus.operator-sdk.controllers.streamjob.namespaces", watched);
        settings.put("oncestream.operator.leader-election.enabled", "false");
        operator = install.start("operator-3.log", settings);
        operator.awaitOutput("for namespace(s): [" + watched + "]", WAIT);
        operator.awaitOutput("'streamjob' controller started", WAIT);
        long mark = audit.mark();

        apply(other, "ignored", Map.of("parallelism: 2", "parallelism: 1"));
        apply(watched, "seen", Map.of("parallelism: 2", "parallelism: 1"));
        awaitStatus(watched, "seen", s -> s.phase == Phase.Pending);
        assertThat(job(other, "ignored").getStatus()).as("a job outside the watched namespaces is not reconciled").isNull();
        assertThat(audit.since(mark, r -> r.user().equals(OPERATOR_USER) && other.equals(r.namespace())))
                .as("no request at all in a namespace that is not watched").isEmpty();
    }
}
