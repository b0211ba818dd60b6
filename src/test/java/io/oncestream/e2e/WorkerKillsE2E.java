package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.testing.Awaits;

/**
 * Workers die while records keep arriving: SIGKILLs of the worker JVMs in their containers at
 * random moments (the kubelet restarts them) and {@code kubectl delete pod}s (the StatefulSet
 * controller recreates them). The table ends exactly as the records say, and the consumer
 * group, sampled all along, never runs ahead of the table.
 */
class WorkerKillsE2E extends E2ETest {

    private static final int KILLS = 10;
    private static final int POD_DELETES = 3;

    private static E2EJob job;

    @Test
    void killedAndDeletedWorkersLoseNothingAndDoubleNothing() throws Exception {
        job = E2EJob.own(kube, kafka, cassandra, "e2e-kills", 6, 4000);
        Random random = seededRandom("WorkerKillsE2E");
        job.produce(2000);
        job.apply(E2EJob.SHORT_BATCHES);
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 1);

        List<String> violations = new ArrayList<>();
        int kills = 0;
        int deletes = 0;
        try (Producing producing = new Producing(job, 150, Duration.ofMillis(200))) {
            for (int i = 0; i < POD_DELETES; i++) {
                int index = random.nextInt(2);
                String pod = "paid-orders-" + index;
                Thread.sleep(1000 + random.nextInt(3000)); // a random moment for the fault, not a synchronization
                String uid = job.pod(index).getMetadata().getUid();
                kube.kubectl(null, "delete", "pod", "-n", job.namespace, pod, "--wait=false").orThrow();
                deletes++;
                // The StatefulSet controller replaces it; later kills must hit the new pod, whose restarts count.
                Awaits.until(E2ESettings.WAIT, "a new " + pod + " with a running worker", () -> {
                    var now = job.pod(index);
                    return now != null && !now.getMetadata().getUid().equals(uid) && node.workerPid(now).isPresent();
                });
                violations.addAll(job.groupOffsetsAheadOfTable());
            }
            while (kills < KILLS) {
                int index = random.nextInt(2);
                String pod = "paid-orders-" + index;
                Awaits.until(E2ESettings.WAIT, "the worker of " + pod + " to run", () -> node.workerPid(job.pod(index)).isPresent());
                Thread.sleep(500 + random.nextInt(3500)); // a random moment for the fault, not a synchronization
                if (node.killWorker(job.pod(index))) {
                    kills++;
                    System.out.println("[e2e] kill -9 #" + kills + " of the worker in " + pod);
                }
                violations.addAll(job.groupOffsetsAheadOfTable());
            }
        }
        System.out.println("[e2e] produced " + job.produced() + " records; " + kills + " kills, " + deletes + " pod deletes");
        assertThat(violations).as("consumer-group offsets ahead of the table").isEmpty();

        job.awaitExactTable(E2ESettings.WAIT);
        assertThat(job.groupOffsetsAheadOfTable()).isEmpty();
        int restarts = job.pods().stream().mapToInt(WorkerKillsE2E::restarts).sum();
        assertThat(restarts).as("container restarts in the pods' status").isGreaterThanOrEqualTo(KILLS);
        job.awaitStatus("Running again", E2ESettings.WAIT, s -> s.phase == io.oncestream.api.StreamJobStatus.Phase.Running);
    }

    private static int restarts(Pod pod) {
        return pod.getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
    }
}
