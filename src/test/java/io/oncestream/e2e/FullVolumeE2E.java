package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;

/**
 * A worker's checkpoint volume fills up on the real node while records arrive. Its
 * PersistentVolume is a 4 MiB tmpfs mounted in the node's mount namespace (a hostPath volume
 * bound to the worker's claim in advance), filled by a file written there. The job goes
 * Degraded with Ready=False naming the pod, its PVC and the file it could not write; no batch
 * commits and the consumer group does not move meanwhile; once the file is deleted the same
 * worker goes on by itself, and the table ends exact. (The same on a real worker process,
 * read-only volumes included: {@code CheckpointVolumeIT}.)
 */
class FullVolumeE2E extends E2ETest {

    private static final Duration HOLD = Duration.ofSeconds(15);

    @Test
    void aFullCheckpointVolumeDegradesTheJobNamingItsClaimAndTheJobGoesOnWhenSpaceIsFreed() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-full", 2, 2000);
        String storageClass = "tiny-" + job.namespace;
        // Beside the provisioner's volumes (the stack's volumes directory, seen alike by this machine and the node).
        Path volume = node.service().dataDir().getParent().resolve("volumes").resolve("full-" + job.namespace);
        Files.createDirectories(volume);
        node.service().run("exec", "mount", "-t", "tmpfs", "-o", "size=4m,uid=10001,gid=10001,mode=0750", "tmpfs",
                volume.toString());
        try {
            kube.kubectl(persistentVolume(storageClass, volume, job.namespace), "apply", "-f", "-").orThrow();
            job.produce(500);
            Map<String, String> edits = new LinkedHashMap<>(E2EJob.SHORT_BATCHES);
            edits.put("  parallelism: 2\n", "  parallelism: 1\n");
            edits.put("    size: 1Gi\n", "    size: 1Gi\n    storageClassName: " + storageClass + "\n");
            job.apply(edits);
            job.awaitStatus("Running on the small volume", E2ESettings.WAIT,
                    s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);
            List<String> ahead = new ArrayList<>();
            try (Producing producing = new Producing(job, 50, Duration.ofMillis(250))) {
                long filled = System.nanoTime();
                String filler = volume.resolve("filler").toString();
                node.service().run("exec", "sh", "-c", "dd if=/dev/zero of=" + filler + " bs=64k 2>/dev/null; sync; true");
                StreamJobStatus degraded = job.awaitStatus("Degraded, naming the claim", E2ESettings.WAIT,
                        s -> s.phase == Phase.Degraded && s.condition(ConditionType.Ready)
                                .filter(c -> "CheckpointVolumeUnavailable".equals(c.reason)).isPresent());
                Condition ready = degraded.condition(ConditionType.Ready).orElseThrow();
                System.out.printf("[e2e] volume filled: Degraded %.1f s later: %s%n", (System.nanoTime() - filled) / 1e9,
                        ready.message);
                assertThat(ready.message).contains("PVC checkpoint-paid-orders-0").contains("No space left on device")
                        .contains("/checkpoint/");
                // While the volume is full, nothing commits: the job's batch and group stay where they are.
                long batch = degraded.batchId;
                Map<Integer, Long> group = job.groupOffsets();
                long until = System.nanoTime() + HOLD.toNanos();
                while (System.nanoTime() < until) {
                    ahead.addAll(job.groupOffsetsAheadOfTable());
                    Thread.sleep(1_000); // sampling while the volume stays full, not a synchronization
                }
                StreamJobStatus held = job.status();
                assertThat(held.batchId).as("batches committed while the volume is full").isEqualTo(batch);
                assertThat(job.groupOffsets()).as("the group while the volume is full").isEqualTo(group);
                assertThat(held.phase).isEqualTo(Phase.Degraded);

                int restarts = restarts(job);
                assertThat(restarts).as("the worker pod's container restarts").isNotNegative();
                long freed = System.nanoTime();
                node.service().run("exec", "rm", "-f", filler);
                job.awaitStatus("Running again once space is freed", E2ESettings.WAIT,
                        s -> s.phase == Phase.Running && s.batchId != null && s.batchId > batch);
                System.out.printf("[e2e] space freed: Running and committing %.1f s later%n", (System.nanoTime() - freed) / 1e9);
                assertThat(restarts(job)).as("the worker waited; it was not restarted").isEqualTo(restarts);
            }
            job.awaitExactTable(E2ESettings.WAIT);
            assertThat(ahead).as("consumer-group offsets ahead of the table while the volume was full").isEmpty();
        } finally {
            try {
                E2EJob.deleteAll(kube); // the pod must be gone before its volume can be unmounted
            } finally {
                try {
                    node.service().run("exec", "umount", volume.toString());
                    Files.deleteIfExists(volume);
                } finally {
                    kube.kubectl(null, "delete", "pv", "full-" + job.namespace, "--ignore-not-found").orThrow();
                }
            }
        }
    }

    /** A hostPath volume at {@code path}, bound in advance to the first worker's claim. */
    private static String persistentVolume(String storageClass, Path path, String namespace) {
        return """
                apiVersion: v1
                kind: PersistentVolume
                metadata:
                  name: full-%s
                spec:
                  capacity: {storage: 1Gi}
                  accessModes: [ReadWriteOnce]
                  persistentVolumeReclaimPolicy: Retain
                  storageClassName: %s
                  hostPath: {path: %s, type: Directory}
                  claimRef: {namespace: %s, name: checkpoint-paid-orders-0}
                """.formatted(namespace, storageClass, path, namespace);
    }

    private static int restarts(E2EJob job) {
        var pod = job.pod(0);
        return pod == null || pod.getStatus().getContainerStatuses() == null ? -1
                : pod.getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
    }
}
