package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.NetworkFaults;
import io.oncestream.testing.Signals;

/**
 * A soak run: steady input for {@code -Doncestream.soak.minutes} (30 by default) with a fault
 * every 20-60 s, drawn at random from what the fault tests inject one by one: a worker's JVM
 * killed, a worker pod force-deleted, a worker paused, a worker cut off from Cassandra or from
 * Kafka, the broker slow or restarted, Cassandra stopped, the operator killed or cut off from
 * the API server. After each fault, the time from its end to every worker's next commit is
 * measured (from the workers' own {@code /progress}), and to the status showing a newer batch.
 * The group is sampled after each fault and must never be ahead of the table; at the end the
 * table must be exact. Prints
 * the faults survived, the records and the worst recovery time. A benchmark, not a test (not in
 * the suite): {@code deploy/local/test.sh -Dit.test=SoakBenchmark -Doncestream.soak.minutes=30}.
 */
class SoakBenchmark extends E2ETest {

    private final List<String> ahead = new ArrayList<>();

    @Test
    void soak() throws Exception {
        Duration length = Duration.ofMinutes(Long.getLong("oncestream.soak.minutes", 30));
        Random random = seededRandom("SoakBenchmark");
        operator.upgrade(Map.of("leaderElection.enabled", "true"), E2ESettings.WAIT);
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "soak", 4, 5000);
        job.produce(1000);
        job.apply(E2EJob.SHORT_BATCHES);
        job.awaitStatus("Running", E2ESettings.WAIT, s -> s.phase == Phase.Running && s.batchId != null && s.batchId >= 0);

        String[] kinds = {"kill-worker", "force-delete", "pause-worker", "cut-cassandra", "cut-kafka", "slow-broker",
            "restart-broker", "stop-cassandra", "kill-operator", "cut-operator"};
        Map<String, List<Double>> recoveries = new TreeMap<>();
        Map<String, List<Double>> statusRecoveries = new TreeMap<>();
        long start = System.nanoTime();
        int faults = 0;
        Producing producing = new Producing(job, 50, Duration.ofMillis(250));
        try (NetworkFaults network = new NetworkFaults()) {
            while (System.nanoTime() - start < length.toNanos()) {
                Thread.sleep(20_000 + random.nextInt(40_000)); // steady input between faults, not a synchronization
                producing.check();
                String kind = kinds[random.nextInt(kinds.length)];
                Duration hold = Duration.ofSeconds(10 + random.nextInt(21));
                int index = random.nextInt(2);
                System.out.printf("[soak] %s: fault %d, %s%s%n", elapsed(start), faults + 1, kind,
                        kind.startsWith("cut") || kind.startsWith("pause") || kind.startsWith("slow") || kind.startsWith("stop")
                                ? " for " + hold.toSeconds() + " s" : "");
                if (kind.equals("restart-broker")) {
                    producing.close(); // the producer's records must all be acknowledged to be expected
                }
                long[] committed = committedBatches(job, new long[] {-1, -1});
                inject(kind, job, network, index, hold);
                long ended = System.nanoTime();
                if (kind.equals("restart-broker")) {
                    producing = new Producing(job, 50, Duration.ofMillis(250));
                }
                long[] atEnd = committedBatches(job, committed);
                Awaits.until(Duration.ofMinutes(5), "every worker's next commit after " + kind, () -> {
                    long[] now = committedBatches(job, new long[] {-1, -1});
                    return now[0] > atEnd[0] && now[1] > atEnd[1];
                });
                double seconds = (System.nanoTime() - ended) / 1e9;
                long batch = currentBatch(job);
                job.awaitStatus("the status past batch " + batch + " after " + kind, Duration.ofMinutes(5),
                        s -> s.batchId != null && s.batchId > batch && s.phase == Phase.Running);
                double status = (System.nanoTime() - ended) / 1e9;
                recoveries.computeIfAbsent(kind, k -> new ArrayList<>()).add(seconds);
                statusRecoveries.computeIfAbsent(kind, k -> new ArrayList<>()).add(status);
                faults++;
                System.out.printf("[soak] %s: %s over; every worker committed again %.1f s after its end, the status showed"
                        + " it after %.1f s%n", elapsed(start), kind, seconds, status);
                ahead.addAll(job.groupOffsetsAheadOfTable());
            }
        } finally {
            producing.close();
        }
        job.awaitExactTable(Duration.ofMinutes(5));
        ahead.addAll(job.groupOffsetsAheadOfTable());
        double worst = recoveries.values().stream().flatMap(List::stream).mapToDouble(Double::doubleValue).max().orElse(0);
        System.out.printf("[soak] %d min, %d faults survived, %d records produced, %d rows exact; worst recovery %.1f s"
                + " (fault's end to every worker's next commit)%n", length.toMinutes(), faults, job.produced(), job.rows().size(), worst);
        recoveries.forEach((kind, list) -> System.out.printf("[soak]   %-15s %2d x, every worker committed again after %s s;"
                + " the status after %s s%n", kind, list.size(), list.stream().map(d -> String.format("%.1f", d)).toList(),
                statusRecoveries.get(kind).stream().map(d -> String.format("%.1f", d)).toList()));
        assertThat(ahead).as("consumer-group offsets ahead of the table at some moment").isEmpty();
    }

    private void inject(String kind, E2EJob job, NetworkFaults network, int index, Duration hold) throws Exception {
        Awaits.until(E2ESettings.WAIT, "worker " + index + " to run", () -> node.workerPid(job.pod(index)).isPresent());
        Pod pod = job.pod(index);
        switch (kind) {
            case "kill-worker" -> node.killWorker(pod);
            case "force-delete" -> kube.kubectl(null, "delete", "pod", "-n", job.namespace, pod.getMetadata().getName(),
                    "--grace-period=0", "--force", "--wait=false").orThrow();
            case "pause-worker" -> {
                long pid = node.workerPid(pod).orElseThrow();
                Signals.send("STOP", pid);
                try {
                    Thread.sleep(hold.toMillis()); // the fault's duration
                } finally {
                    if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        Signals.send("CONT", pid);
                    }
                }
            }
            case "cut-cassandra", "cut-kafka" -> {
                network.drop(pod.getStatus().getPodIP(), kind.equals("cut-kafka") ? NetworkFaults.KAFKA : NetworkFaults.CASSANDRA);
                try {
                    Thread.sleep(hold.toMillis()); // the fault's duration
                } finally {
                    network.healAll();
                }
            }
            case "slow-broker" -> {
                try (AutoCloseable slow = kafka.slow(Duration.ofMillis(500), Duration.ofSeconds(1))) {
                    Thread.sleep(hold.toMillis()); // the fault's duration
                }
            }
            case "restart-broker" -> kafka.restart();
            case "stop-cassandra" -> {
                cassandra.stop();
                try {
                    Thread.sleep(hold.toMillis()); // the fault's duration
                } finally {
                    cassandra.start();
                }
            }
            case "kill-operator" -> operator.kill9();
            case "cut-operator" -> {
                network.drop(operator.pod().getStatus().getPodIP(), NetworkFaults.API_SERVER);
                try {
                    Thread.sleep(hold.toMillis()); // the fault's duration
                } finally {
                    network.healAll();
                }
            }
            default -> throw new IllegalArgumentException(kind);
        }
    }

    /**
     * The last batch each of the two workers committed, from its own {@code /progress}; where a
     * worker does not answer (or has not read its checkpoint yet), the figure in {@code known}.
     */
    private static long[] committedBatches(E2EJob job, long[] known) {
        long[] out = known.clone();
        for (int i = 0; i < 2; i++) {
            Pod pod = job.pod(i);
            String ip = pod == null || pod.getStatus() == null ? null : pod.getStatus().getPodIP();
            var progress = ip == null ? null : E2EJob.progress(ip);
            if (progress != null) {
                out[i] = Math.max(out[i], progress.path("batchId").asLong(-1));
            }
        }
        return out;
    }

    private static long currentBatch(E2EJob job) {
        StreamJobStatus s = job.status();
        return s == null || s.batchId == null ? -1 : s.batchId;
    }

    private static String elapsed(long start) {
        long s = (System.nanoTime() - start) / 1_000_000_000L;
        return String.format("%02d:%02d", s / 60, s % 60);
    }
}
