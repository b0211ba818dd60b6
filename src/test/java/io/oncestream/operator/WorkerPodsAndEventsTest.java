package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.operator.TestJobs;
import io.oncestream.operator.progress.WorkerPods;
import io.oncestream.operator.status.PhaseEvents;
import io.oncestream.operator.status.StatusProjection;

/** Which pods are polled, and which status changes become Kubernetes Events. */
class WorkerPodsAndEventsTest {

    private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");

    private static Pod pod(String name, String phase, String ip, boolean ready) {
        return new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewStatus().withPhase(phase).withPodIP(ip)
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .endStatus().build();
    }

    @Test
    void onePerOrdinalAndRunningPodsArePolledReadyOrNot() {
        List<WorkerPods.Expected> expected = WorkerPods.expected("paid-orders", 4, List.of(
                pod("paid-orders-0", "Running", "10.1.0.7", true),
                pod("paid-orders-1", "Running", "10.1.0.8", false),
                pod("paid-orders-2", "Pending", null, false),
                pod("paid-orders-9", "Running", "10.1.0.9", true),
                pod("other-0", "Running", "10.1.0.10", true)));
        assertThat(expected).extracting(e -> e.podName() + " " + e.ordinal() + " " + (e.pod() != null) + " " + e.ready() + " " + e.pollAddress())
                .containsExactly(
                        "paid-orders-0 0 true true 10.1.0.7:8080",
                        "paid-orders-1 1 true false 10.1.0.8:8080",
                        "paid-orders-2 2 true false null",
                        "paid-orders-3 3 false false null");
        assertThat(WorkerPods.expected("paid-orders", 1, List.of(pod("paid-orders-0", "Running", "fd00::5", true))).get(0)
                .pollAddress()).isEqualTo("[fd00::5]:8080");
    }

    @Test
    void eventsOnPhaseChangesAndOnRejectedSpecsOnly() {
        StreamJob job = TestJobs.job("");
        StreamJobStatus pending = StatusProjection.project(job, null, null, List.of(
                new StatusProjection.Worker("paid-orders-0", true, false, null, "pod is Pending")), T0);
        assertThat(PhaseEvents.between(null, pending)).extracting(e -> e.type() + " " + e.reason())
                .containsExactly("Normal PhasePending");
        StreamJobStatus samePending = StatusProjection.project(job, pending, null, List.of(
                new StatusProjection.Worker("paid-orders-0", true, false, null, "connect refused")), T0);
        assertThat(PhaseEvents.between(pending, samePending)).isEmpty();

        StreamJobStatus refused = StatusProjection.project(job, pending, null,
                "spec.parallelism changed from 2 to 3: the job has checkpoints", List.of(
                        new StatusProjection.Worker("paid-orders-0", true, false, null, "pod is Pending")), T0);
        assertThat(refused.phase).isEqualTo(Phase.Pending);
        assertThat(PhaseEvents.between(pending, refused)).extracting(e -> e.type() + " " + e.reason() + " " + e.message())
                .containsExactly("Warning ChangeRefused spec.parallelism changed from 2 to 3: the job has checkpoints");
        assertThat(PhaseEvents.between(refused, refused)).isEmpty();

        StreamJobStatus invalid = StatusProjection.project(job, pending, "spec.filter: does not compile", List.of(), T0);
        assertThat(PhaseEvents.between(pending, invalid)).extracting(e -> e.type() + " " + e.reason())
                .containsExactly("Warning InvalidSpec", "Warning PhaseFailed");
    }
}
