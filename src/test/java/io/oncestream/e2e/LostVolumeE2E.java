package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import io.oncestream.testing.Awaits;

/**
 * A worker's checkpoint volume lost mid-stream, after the records it had read aged out of
 * Kafka (docs/protocol.md §8): its PersistentVolumeClaim is deleted with its pod while records
 * keep arriving, and Kafka's log start is moved up to the consumer group's offsets first
 * ({@code deleteRecords}, what retention does). The StatefulSet makes a new pod on a new, empty
 * volume; its worker finds no checkpoint, goes on from the chain points the job committed to
 * its consumer group (recorded in the new checkpoint as {@code recovered}), and the table ends
 * exactly as the produced records say.
 */
class LostVolumeE2E extends E2ETest {

    @Test
    void aDeletedVolumeIsRecoveredFromTheConsumerGroupAndTheTableIsExact() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-lost", 4, 3000);
        job.produce(2000);
        job.apply(E2EJob.SHORT_BATCHES);
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 1);
        String claim = "checkpoint-paid-orders-1";
        String oldClaimUid = kube.admin().persistentVolumeClaims().inNamespace(job.namespace).withName(claim).get()
                .getMetadata().getUid();
        try (Producing producing = new Producing(job, 100, Duration.ofMillis(200))) {
            producing.awaitSent(1500, "before the volume is lost");
            // What retention does: the records below the group's offsets are gone from Kafka.
            Map<TopicPartition, RecordsToDelete> truncate = new HashMap<>();
            job.groupOffsets().forEach((p, offset) -> truncate.put(new TopicPartition(job.topic, p), RecordsToDelete.beforeOffset(offset)));
            kafka.admin().deleteRecords(truncate).all().get();
            System.out.println("[e2e] Kafka's log start moved up to the group offsets " + job.groupOffsets());
            kube.kubectl(null, "delete", "pvc", "-n", job.namespace, claim, "--wait=false").orThrow();
            kube.kubectl(null, "delete", "pod", "-n", job.namespace, "paid-orders-1").orThrow();
            Awaits.until(E2ESettings.WAIT, "a new volume for paid-orders-1", () -> {
                var pvc = kube.admin().persistentVolumeClaims().inNamespace(job.namespace).withName(claim).get();
                return pvc != null && !pvc.getMetadata().getUid().equals(oldClaimUid) && pvc.getSpec().getVolumeName() != null;
            });
            long batch = job.status().batchId == null ? 0 : job.status().batchId;
            job.awaitStatus("both workers committing again", E2ESettings.WAIT,
                    s -> s.phase == io.oncestream.api.StreamJobStatus.Phase.Running && s.workers != null
                            && s.workers.stream().allMatch(w -> w.batchId != null && w.batchId >= 1));
            System.out.println("[e2e] the job runs again after batch " + batch);
            producing.awaitSent(1500, "after the recovery");
        }
        job.awaitExactTable(E2ESettings.WAIT);
        assertThat(job.groupOffsetsAheadOfTable()).isEmpty();
        Path volume = node.volumeDir(kube.admin(), job.namespace, claim);
        assertThat(volume.resolve("recovered")).as("the new checkpoint went on from the group's chain points").exists();
        System.out.println("[e2e] " + volume.resolve("recovered") + ": " + Files.readString(volume.resolve("recovered")).replace("\n", " ").strip());
    }
}
