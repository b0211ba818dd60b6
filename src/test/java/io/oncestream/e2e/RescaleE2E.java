package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.testing.Awaits;

/**
 * A running job rescaled under a steady producer (docs/protocol.md §11): 2 -> 3 workers by an
 * edit of the spec, then 3 -> 1 -> 4 -> 2 with {@code kubectl scale}, with worker JVMs killed
 * (kill -9) at random moments of each hand-off and the operator killed during two of them.
 * After each step every partition is read by exactly one worker and the job reports the new
 * epoch (one hand-off per step: no epoch beyond the steps'); all along the consumer group is
 * never ahead of the table; at the end the table is exactly what the produced records say.
 */
class RescaleE2E extends E2ETest {

    private static final int PARTITIONS = 6;
    private static final int KILLS_PER_STEP = 3;

    @Test
    void rescalingUnderLoadWithKillsLosesNothingAndDoublesNothing() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-rescale", PARTITIONS, 4000);
        Random random = seededRandom("RescaleE2E");
        job.produce(2000);
        job.apply(E2EJob.SHORT_BATCHES);
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 1);

        List<String> violations = new ArrayList<>();
        int kills = 0;
        int operatorKills = 0;
        int[] steps = {3, 1, 4, 2};
        try (Producing producing = new Producing(job, 150, Duration.ofMillis(200))) {
            for (int step = 0; step < steps.length; step++) {
                int from = step == 0 ? 2 : steps[step - 1];
                int to = steps[step];
                int epoch = step + 1;
                long started = System.nanoTime();
                if (step == 0) {
                    Map<String, String> edits = new java.util.HashMap<>(E2EJob.SHORT_BATCHES);
                    edits.put("parallelism: 2", "parallelism: " + to);
                    job.apply(edits);
                } else {
                    kube.kubectl(null, "scale", "-n", job.namespace, "streamjob/paid-orders", "--replicas=" + to).orThrow();
                }
                // Kill workers (old ones at the barrier, new ones starting) at random moments of the hand-off.
                for (int k = 0; k < KILLS_PER_STEP; k++) {
                    Thread.sleep(random.nextInt(2500)); // a random moment of the hand-off, not a synchronization
                    String killed = killARunningWorker(job, Math.max(from, to), random);
                    if (killed != null) {
                        kills++;
                        System.out.println("[e2e] step " + from + " -> " + to + ": kill -9 #" + kills + " of the worker in " + killed);
                    }
                }
                if (step == 1 || step == 2) {
                    int restarts = operator.restarts();
                    operator.kill9();
                    operatorKills++;
                    Awaits.until(E2ESettings.WAIT, "the operator container restarted", () -> operator.restarts() > restarts);
                    operator.awaitReady(E2ESettings.WAIT);
                    System.out.println("[e2e] step " + from + " -> " + to + ": operator killed and restarted");
                }
                violations.addAll(job.groupOffsetsAheadOfTable());
                StreamJobStatus done = job.awaitStatus("rescaled from " + from + " to " + to + " (epoch " + epoch + ")",
                        E2ESettings.WAIT, s -> rescaled(s, epoch, to));
                System.out.printf("[e2e] %d -> %d workers: epoch %d running after %.1f s (%s)%n", from, to, epoch,
                        (System.nanoTime() - started) / 1e9, done.condition(ConditionType.Rescaling).map(c -> c.message).orElse(""));
                assertOnePartitionOwnerEach(done, to);
                assertThat(done.replicas).isEqualTo(to);
                String scale = kube.kubectl(null, "get", "-n", job.namespace, "streamjob/paid-orders", "--subresource=scale",
                        "-o", "jsonpath={.spec.replicas} {.status.replicas} {.status.selector}").orThrow().stdout();
                assertThat(scale).as("the scale subresource").startsWith(to + " " + to + " ").contains("paid-orders");
                violations.addAll(job.groupOffsetsAheadOfTable());
            }
        }
        System.out.println("[e2e] produced " + job.produced() + " records; " + kills + " worker kills, " + operatorKills
                + " operator kills");
        assertThat(violations).as("consumer-group offsets ahead of the table").isEmpty();
        job.awaitExactTable(E2ESettings.WAIT);
        assertThat(job.groupOffsetsAheadOfTable()).isEmpty();
        assertThat(kills + operatorKills).as("kills during the hand-offs").isGreaterThanOrEqualTo(10);
        List<String> savepoints = new ArrayList<>();
        for (int epoch = 1; epoch <= steps.length; epoch++) {
            var map = kube.admin().configMaps().inNamespace(job.namespace).withName("paid-orders-savepoint-" + epoch).get();
            assertThat(map).as("savepoint of epoch " + epoch).isNotNull();
            assertThat(map.getImmutable()).isTrue();
            savepoints.add(map.getMetadata().getName());
        }
        // Each step is one hand-off: a seal of the one just applied never starts another.
        assertThat(kube.admin().configMaps().inNamespace(job.namespace).withName("paid-orders-savepoint-" + (steps.length + 1)).get())
                .as("a savepoint of an epoch nobody asked for").isNull();
        System.out.println("[e2e] savepoints " + savepoints);
    }

    /**
     * Kills (SIGKILL) the JVM of a worker, old or new, that runs now, picked at random among the
     * first {@code ordinals}; tries for up to 5 s while pods come and go. Returns the pod's name,
     * or null if no worker ran in that time.
     */
    private static String killARunningWorker(E2EJob job, int ordinals, Random random) throws InterruptedException {
        String[] killed = {null};
        Awaits.within(Duration.ofSeconds(5), Duration.ofMillis(200), () -> {
            List<io.fabric8.kubernetes.api.model.Pod> running = new ArrayList<>();
            for (int i = 0; i < ordinals; i++) {
                var pod = job.pod(i);
                if (pod != null && node.workerPid(pod).isPresent()) {
                    running.add(pod);
                }
            }
            if (!running.isEmpty()) {
                var pod = running.get(random.nextInt(running.size()));
                if (node.killWorker(pod)) {
                    killed[0] = pod.getMetadata().getName();
                    return true;
                }
            }
            return false;
        });
        return killed[0];
    }

    /** The rescale to {@code epoch} completed, every worker of it running and reporting. */
    private static boolean rescaled(StreamJobStatus s, int epoch, int workers) {
        Condition rescaling = s.condition(ConditionType.Rescaling).orElse(null);
        return s.epoch != null && s.epoch == epoch && rescaling != null && "False".equals(rescaling.status)
                && s.phase == StreamJobStatus.Phase.Running && s.workers != null && s.workers.size() == workers;
    }

    /** Every partition of the topic is read by exactly one of the {@code workers} workers. */
    private static void assertOnePartitionOwnerEach(StreamJobStatus s, int workers) {
        List<String> all = new ArrayList<>();
        s.workers.forEach(w -> all.addAll(w.partitions == null ? List.of() : w.partitions));
        Set<String> distinct = new TreeSet<>(all);
        assertThat(all).as("partitions of " + workers + " workers: " + s.workers.stream().map(w -> w.name + "=" + w.partitions)
                .toList()).hasSize(PARTITIONS).hasSameSizeAs(distinct);
    }
}
