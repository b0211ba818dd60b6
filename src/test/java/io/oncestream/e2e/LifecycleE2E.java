package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.OrderStream;
import io.oncestream.engine.checkpoint.AppendBatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.operator.model.WorkerStatefulSets;
import io.oncestream.testing.Awaits;

/**
 * A StreamJob's life while records keep arriving: suspended (no workers, checkpoints kept) and
 * resumed from its checkpoints; its filter changed (the workers stop at a batch boundary and
 * the new ones start from a savepoint: every record below the savepoint's offsets is judged by the
 * old filter, every record from them by the new one); a job of three workers over six partitions that
 * drains what is there and ends Completed, then is deleted with its volumes; JVM options the
 * worker's JVM refuses, reported, then options it takes.
 */
class LifecycleE2E extends E2ETest {

    private static final String OLD_FILTER = "filter: \"value.status == 'PAID' && value.amount > 100.0\"";
    private static final String NEW_FILTER = "filter: \"value.status == 'PAID' && value.amount > 200.0\"";


    @Test
    void suspendResumeAndAFilterChangeMidStream() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-life", 4, 3000);
        job.produce(1000);
        job.apply(Map.of());
        job.awaitStatus("Running", E2ESettings.WAIT, s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);
        Set<String> claims = claimUids(job);

        Map<Integer, Long> boundary;
        try (Producing producing = new Producing(job, 100, Duration.ofMillis(250))) {
            // Suspend: the workers stop at a safe point, their pods go, their volumes stay.
            producing.awaitSent(800, "before the suspend");
            job.apply(Map.of("  parallelism: 2\n", "  parallelism: 2\n  suspend: true\n"));
            StreamJobStatus suspended = job.awaitStatus("Suspended without pods", E2ESettings.WAIT,
                    s -> s.phase == Phase.Suspended && job.pods().isEmpty());
            assertThat(claimUids(job)).as("checkpoint volumes while suspended").isEqualTo(claims);
            long lastBatch = suspended.batchId;
            producing.awaitSent(1200, "while suspended");

            // Resume: the same volumes, batches continue from the checkpoints.
            job.apply(Map.of());
            job.awaitStatus("Running after the resume, past batch " + lastBatch, E2ESettings.WAIT,
                    s -> s.phase == Phase.Running && s.batchId != null && s.batchId > lastBatch);
            assertThat(claimUids(job)).as("checkpoint volumes after the resume").isEqualTo(claims);
            producing.awaitSent(1200, "after the resume");

            // A filter change while records keep arriving: the workers stop at a batch boundary,
            // the operator takes a savepoint, and the new workers start from it with the new filter.
            String oldHash = configHash(job);
            job.apply(Map.of(OLD_FILTER, NEW_FILTER));
            StreamJobStatus changed = job.awaitStatus("the new configuration applied from a savepoint", E2ESettings.WAIT,
                    s -> s.epoch != null && s.epoch == 1 && s.phase == Phase.Running && s.condition(ConditionType.Rescaling)
                            .filter(c -> "False".equals(c.status) && "RescaleCompleted".equals(c.reason)).isPresent());
            System.out.println("[e2e] " + changed.condition(ConditionType.Rescaling).orElseThrow().message);
            assertThat(configHash(job)).isNotEqualTo(oldHash);
            assertThat(job.pods()).allSatisfy(p -> assertThat(p.getMetadata().getAnnotations()
                    .get(StreamJobResources.CONFIG_HASH_ANNOTATION)).isEqualTo(configHash(job)));
            boundary = savepointOffsets(job, 1);
            System.out.println("[e2e] the new filter applies from offsets " + boundary);
            producing.awaitSent(1200, "under the new filter");
        }

        Predicate<OrderStream.Produced> before = p -> p.status().equals("PAID") && p.amount() > 100;
        Predicate<OrderStream.Produced> after = p -> p.status().equals("PAID") && p.amount() > 200;
        Map<String, String> expected = job.expectedRows(before, after, boundary);
        assertThat(expected).as("the change makes a difference").isNotEqualTo(job.expectedRows(before, before, Map.of()));
        job.awaitExactTable(expected, E2ESettings.WAIT);
    }

    @Test
    void threeWorkersOverSixPartitionsDrainAndCompleteThenGoWithTheirVolumes() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-drain", 6, 3000);
        job.produce(6000);
        job.apply(Map.of("  parallelism: 2\n", "  parallelism: 3\n", "    interval: 1s\n", "    availableNow: true\n",
                "whenDeleted: Retain", "whenDeleted: Delete"));
        StreamJobStatus done = job.awaitStatus("Completed", E2ESettings.WAIT, s -> s.phase == Phase.Completed);
        job.awaitExactTable(E2ESettings.WAIT);
        var logs = kube.kubectl(null, "logs", "-n", job.namespace, job.name + "-0").orThrow();
        assertThat(logs.stdout() + logs.stderr()).as("an availableNow worker's JVM options (smaller C2 inlining limits)")
                .contains("Picked up JAVA_TOOL_OPTIONS: " + WorkerStatefulSets.AVAILABLE_NOW_JVM_OPTIONS + "\n");

        assertThat(done.workers).hasSize(3);
        List<String> all = new ArrayList<>();
        done.workers.forEach(w -> {
            assertThat(w.partitions).as("partitions of " + w.name).hasSize(2);
            all.addAll(w.partitions);
        });
        assertThat(all).as("each partition read and written by exactly one worker").doesNotHaveDuplicates().hasSize(6)
                .allMatch(p -> p.startsWith(job.topic + "-"));
        // Each worker's write-ahead log (offsets/ on its own volume) names its partitions and no other.
        for (StreamJobStatus.WorkerStatus w : done.workers) {
            Set<String> logged = new java.util.TreeSet<>();
            Path offsets = node.volumeDir(kube.admin(), job.namespace, "checkpoint-" + w.name).resolve("offsets");
            AppendBatchLog<BatchOffsets> wal = AppendBatchLog.readOnly(offsets, BatchOffsets.class);
            for (long id : wal.batchIds()) {
                wal.get(id).ifPresent(entry -> logged.addAll(entry.partitions().keySet()));
            }
            assertThat(logged).as("partitions in the write-ahead log of " + w.name).containsExactlyInAnyOrderElementsOf(w.partitions);
        }

        kube.kubectl(null, "delete", "sj", job.name, "-n", job.namespace, "--wait=true").orThrow();
        Awaits.until(E2ESettings.WAIT, "workers and checkpoint volumes (whenDeleted: Delete) to be gone", () ->
                job.pods().isEmpty() && kube.admin().persistentVolumeClaims().inNamespace(job.namespace).list().getItems().isEmpty());
    }

    /**
     * A worker in a 256 MiB pod reads a backlog: the operator gives its JVM {@code -Xmx96m} (the
     * limit less what the JVM needs outside its heap), the worker caps its batches to fit an
     * eighth of that heap (maxRecordsPerBatch is 50,000), flushes their writes to the real
     * Cassandra while it reads them, the container is never killed or restarted, and the table is
     * exact. The trigger's interval is 30 minutes: the whole backlog
     * (fewer than maxRecordsPerBatch records) arrives within the first one only because the
     * batches cut short to fit the heap follow one another at once; were the next to wait for the
     * next interval, the table would hold the first batch's rows alone until the wait gives up.
     */
    @Test
    void aWorkerInA256MiPodCatchesUpABacklogInBatchesThatFitItsHeap() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-small", 2, 20000);
        job.produce(40000);
        job.apply(Map.of("  parallelism: 2\n", "  parallelism: 1\n  worker:\n    resources:\n      limits: {memory: 256Mi}\n",
                "    interval: 1s\n", "    interval: 30m\n"));
        job.awaitExactTable(E2ESettings.WAIT);
        var output = kube.kubectl(null, "logs", "-n", job.namespace, job.name + "-0").orThrow();
        String logs = output.stdout() + output.stderr();
        assertThat(logs).as("the worker JVM's options")
                .contains("Picked up JAVA_TOOL_OPTIONS: " + WorkerStatefulSets.DEFAULT_JVM_OPTIONS + " -Xmx96m\n");
        assertThat(logs).as("batches capped to the heap").containsPattern("batches hold at most \\d+ records so that a batch fits in \\d+ MiB");
        assertThat(logs).as("writes flushed while batches are read (a 32nd of the heap)")
                .containsPattern("a batch's writes are flushed while it is read, each time they reach \\d+ KiB");
        var status = kube.admin().pods().inNamespace(job.namespace).withName(job.name + "-0").get().getStatus().getContainerStatuses().get(0);
        assertThat(status.getRestartCount()).as("restarts of the worker container (" + status.getLastState() + ")").isZero();
    }

    /**
     * JVM options the worker's JVM refuses: the pod crash-loops, and the job's status names the
     * JVM's own message (the end of the worker's log, from its pod); options it takes, applied
     * after, roll the worker, reach its JVM after the image's defaults, and the table is exact.
     */
    @Test
    void jvmOptionsTheJvmRefusesAreReportedThenOptionsItTakesReachTheWorker() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-jvm", 2, 500);
        job.produce(300);
        String refused = "-XX:+NoSuchOption";
        job.apply(Map.of("  parallelism: 2\n", "  parallelism: 1\n  worker:\n    jvmOptions: \"" + refused + "\"\n"));
        StreamJobStatus failing = job.awaitStatus("the JVM's refusal in the worker's status", E2ESettings.WAIT,
                s -> s.workers != null && s.workers.stream().anyMatch(w -> w.lastError != null
                        && w.lastError.contains("Unrecognized VM option 'NoSuchOption'")));
        System.out.println("[e2e] status of a worker the JVM refuses: " + failing.workers.get(0).lastError);
        assertThat(failing.phase).isNotEqualTo(Phase.Running);
        assertThat(failing.workers.get(0).lastError).startsWith("container worker: CrashLoopBackOff; last exit code 1: ");

        job.apply(Map.of("  parallelism: 2\n", "  parallelism: 1\n  worker:\n    jvmOptions: \"-XX:TieredStopAtLevel=1\"\n"));
        job.awaitStatus("Running with the options the JVM takes", E2ESettings.WAIT,
                s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);
        var logs = kube.kubectl(null, "logs", "-n", job.namespace, job.name + "-0").orThrow();
        assertThat(logs.stdout() + logs.stderr()).as("the worker JVM's options")
                .contains("Picked up JAVA_TOOL_OPTIONS: " + WorkerStatefulSets.DEFAULT_JVM_OPTIONS + " -XX:TieredStopAtLevel=1");
        job.awaitExactTable(E2ESettings.WAIT);
    }

    private static Set<String> claimUids(E2EJob job) {
        Set<String> uids = new HashSet<>();
        for (PersistentVolumeClaim c : kube.admin().persistentVolumeClaims().inNamespace(job.namespace).list().getItems()) {
            uids.add(c.getMetadata().getName() + "=" + c.getMetadata().getUid());
        }
        assertThat(uids).hasSize(2);
        return uids;
    }

    private static String configHash(E2EJob job) {
        var sts = kube.admin().apps().statefulSets().inNamespace(job.namespace).withName(StreamJobResources.statefulSetName(job.name)).get();
        return sts.getSpec().getTemplate().getMetadata().getAnnotations().get(StreamJobResources.CONFIG_HASH_ANNOTATION);
    }

    /**
     * Where a new configuration starts, per partition: the offsets of the savepoint of
     * {@code epoch}. Every batch below was committed under the old configuration, every batch
     * from it under the new one: the hand-off is a clean cut.
     */
    private static Map<Integer, Long> savepointOffsets(E2EJob job, int epoch) {
        var map = kube.admin().configMaps().inNamespace(job.namespace).withName(job.name + "-savepoint-" + epoch).get();
        assertThat(map).as("the savepoint of epoch " + epoch).isNotNull();
        Savepoint savepoint = Savepoint.decode(Path.of(map.getMetadata().getName()), map.getData().get("savepoint.json"));
        Map<Integer, Long> out = new TreeMap<>();
        savepoint.partitions().forEach((tp, point) -> out.put(TopicPartitionKey.parse(tp).partition(), point.offset()));
        assertThat(out).as("every partition in the savepoint").hasSize(4);
        return out;
    }
}
