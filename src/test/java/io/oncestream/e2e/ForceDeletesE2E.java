package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.Awaits;

/**
 * Workers fenced off by their checkpoint's lock. {@code kubectl delete pod --grace-period=0
 * --force} of the workers, as operations people do during incidents, at random moments while
 * records arrive, mixed with SIGKILLs of the worker JVMs: the StatefulSet makes the new pod at
 * once, on the same node and volume, possibly while the old JVM still holds the lock, and the
 * new worker waits for it instead of failing. And a worker paused with SIGSTOP (a zombie). The
 * job never shows Failed, every partition resumes by itself, the table ends exactly as the
 * records say and the consumer group never runs ahead of it. Prints, for each force delete, the
 * time until the new worker's first commit, read from its own {@code /progress}
 * ({@code totals.batches} counts the batches that process committed).
 */
class ForceDeletesE2E extends E2ETest {

    private static final int FORCE_DELETES = 10;
    private static final int KILLS = 4;

    @Test
    void forceDeletedWorkersResumeByThemselvesAndLoseNothing() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-force", 4, 3000);
        Random random = seededRandom("ForceDeletesE2E");
        job.produce(2000);
        // ReadWriteOncePod claims: the scheduler refuses a second pod on a claim while the API server
        // knows the first; a force delete removes the first from the API server at once, so the
        // checkpoint's lock is what fences the old JVM then.
        job.apply(Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 500", "interval: 1s", "interval: 300ms",
                "    size: 1Gi\n", "    size: 1Gi\n    accessMode: ReadWriteOncePod\n"));
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 1);
        assertThat(kube.admin().persistentVolumeClaims().inNamespace(job.namespace).list().getItems())
                .as("the workers' checkpoint claims").hasSize(2)
                .allSatisfy(c -> assertThat(c.getSpec().getAccessModes()).containsExactly("ReadWriteOncePod"));

        Set<Phase> phases = new TreeSet<>();
        Set<String> workerStates = new TreeSet<>();
        List<String> violations = new ArrayList<>();
        List<Double> recoverySeconds = new ArrayList<>();
        Set<String> lockWaits = new TreeSet<>();
        int kills = 0;
        try (Producing producing = new Producing(job, 150, Duration.ofMillis(200))) {
            List<String> actions = new ArrayList<>();
            for (int i = 0; i < FORCE_DELETES; i++) {
                actions.add("delete");
            }
            for (int i = 0; i < KILLS; i++) {
                actions.add("kill");
            }
            java.util.Collections.shuffle(actions, random);
            for (String action : actions) {
                int index = random.nextInt(2);
                String pod = "paid-orders-" + index;
                Awaits.until(E2ESettings.WAIT, "the worker of " + pod + " to run", () -> node.workerPid(job.pod(index)).isPresent());
                Thread.sleep(500 + random.nextInt(3000)); // a random moment for the fault, not a synchronization
                if (action.equals("kill")) {
                    if (node.killWorker(job.pod(index))) {
                        kills++;
                        System.out.println("[e2e] kill -9 of the worker in " + pod);
                    }
                    continue;
                }
                String uid = job.pod(index).getMetadata().getUid();
                long deleted = System.nanoTime();
                kube.kubectl(null, "delete", "pod", "-n", job.namespace, pod, "--grace-period=0", "--force", "--wait=false")
                        .orThrow();
                Awaits.until(E2ESettings.WAIT, "the new " + pod + " to commit a batch", () -> {
                    sample(job.status(), phases, workerStates);
                    var now = job.pod(index);
                    if (now == null || now.getMetadata().getUid().equals(uid) || now.getStatus().getPodIP() == null) {
                        return false;
                    }
                    JsonNode progress = E2EJob.progress(now.getStatus().getPodIP());
                    if (progress != null && !progress.path("lastError").isMissingNode()
                            && progress.path("state").asText().startsWith("WAITING_FOR_CHECKPOINT_LOCK")) {
                        lockWaits.add(pod + ": " + progress.path("lastError").asText());
                    }
                    return progress != null && progress.path("totals").path("batches").asLong() >= 1;
                });
                double seconds = (System.nanoTime() - deleted) / 1e9;
                recoverySeconds.add(seconds);
                System.out.printf("[e2e] force delete #%d of %s: the new worker committed a batch %.1f s later%n", recoverySeconds.size(),
                        pod, seconds);
                violations.addAll(job.groupOffsetsAheadOfTable());
            }
        }
        System.out.println("[e2e] produced " + job.produced() + " records; " + recoverySeconds.size() + " force deletes, "
                + kills + " kills; seconds from force delete to the new worker's first commit: " + recoverySeconds
                + "; phases seen " + phases + ", worker states seen " + workerStates);
        System.out.println("[e2e] new workers seen waiting for the old one's checkpoint lock: " + lockWaits.size()
                + (lockWaits.isEmpty() ? "" : ", e.g. " + lockWaits.iterator().next()));
        assertThat(recoverySeconds).hasSize(FORCE_DELETES);
        assertThat(violations).as("consumer-group offsets ahead of the table").isEmpty();
        job.awaitExactTable(E2ESettings.WAIT);
        sample(job.status(), phases, workerStates);
        assertThat(phases).as("phases seen").doesNotContain(Phase.Failed);
        assertThat(workerStates).as("worker states seen").doesNotContain("FAILED");
        assertThat(job.groupOffsetsAheadOfTable()).isEmpty();
        job.awaitStatus("Running again", E2ESettings.WAIT, s -> s.phase == Phase.Running);
    }

    /**
     * A zombie: the worker JVM is paused with SIGSTOP while records arrive, longer than its
     * liveness probe allows (3 failures, 5 s apart), so the kubelet replaces the container;
     * the old process gets SIGCONT if it still exists. Its writes in flight, or sent late, carry
     * the timestamps its successor's replay gives the same records (docs/protocol.md), so the
     * table ends exact and the group never runs ahead of it.
     */
    @Test
    void aWorkerPausedLongerThanItsLivenessProbeIsReplacedAndChangesNothingLate() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-paused", 2, 2000);
        job.produce(1000);
        job.apply(E2EJob.SHORT_BATCHES);
        job.awaitStatus("both workers committed a batch", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 0);
        Set<Phase> phases = new TreeSet<>();
        Set<String> workerStates = new TreeSet<>();
        try (Producing producing = new Producing(job, 150, Duration.ofMillis(200))) {
            producing.awaitSent(1500, "before the worker is paused");
            var pod = job.pod(0);
            int restartsBefore = restarts(pod);
            long pid = node.workerPid(pod).orElseThrow();
            io.oncestream.testing.Signals.send("STOP", pid);
            long paused = System.nanoTime();
            Awaits.until(E2ESettings.WAIT, "the kubelet to restart the paused worker's container", () -> {
                sample(job.status(), phases, workerStates);
                return restarts(job.pod(0)) > restartsBefore;
            });
            boolean oldAlive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            if (oldAlive) {
                io.oncestream.testing.Signals.send("CONT", pid);
            }
            System.out.printf("[e2e] paused worker replaced %.1f s after SIGSTOP; the old process %s%n",
                    (System.nanoTime() - paused) / 1e9, oldAlive ? "still existed and got SIGCONT" : "was gone");
            Awaits.until(E2ESettings.WAIT, "the new worker of paid-orders-0 to run", () -> node.workerPid(job.pod(0)).isPresent());
            producing.awaitSent(2250, "to the new worker");
        }
        job.awaitExactTable(E2ESettings.WAIT);
        sample(job.status(), phases, workerStates);
        assertThat(phases).as("phases seen").doesNotContain(Phase.Failed);
        assertThat(job.groupOffsetsAheadOfTable()).isEmpty();
    }

    private static int restarts(io.fabric8.kubernetes.api.model.Pod pod) {
        return pod == null || pod.getStatus().getContainerStatuses() == null ? 0
                : pod.getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
    }

    private static void sample(StreamJobStatus s, Set<Phase> phases, Set<String> workerStates) {
        if (s == null) {
            return;
        }
        if (s.phase != null) {
            phases.add(s.phase);
        }
        if (s.workers != null) {
            s.workers.forEach(w -> {
                if (w.state != null) {
                    workerStates.add(w.state);
                }
            });
        }
    }
}
