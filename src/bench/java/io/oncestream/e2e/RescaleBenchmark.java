package io.oncestream.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus;

/**
 * How long a rescale takes on the real node, under a steady producer: from {@code kubectl
 * scale} to (a) the Rescaling condition's end, every new worker planning in the new epoch,
 * and (b) every new worker having committed a batch. Rounds of 2 -> 4 and 4 -> 2 workers over
 * 8 partitions; prints each round and the medians. A benchmark, not a test: it asserts
 * nothing about time and is not in the suite (run it with
 * {@code deploy/local/test.sh -Dit.test=RescaleBenchmark}; {@code -Doncestream.bench.rounds=3}).
 */
class RescaleBenchmark extends E2ETest {

    @Test
    void rescaleTimes() throws Exception {
        int rounds = Integer.getInteger("oncestream.bench.rounds", 3);
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "bench-rescale", 8, 4000);
        job.produce(2000);
        job.apply(Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 2000", "interval: 1s", "interval: 300ms"));
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 0);
        List<String> lines = new ArrayList<>();
        List<Double> upDone = new ArrayList<>();
        List<Double> upCommitted = new ArrayList<>();
        List<Double> downDone = new ArrayList<>();
        List<Double> downCommitted = new ArrayList<>();
        int epoch = 0;
        try (Producing producing = new Producing(job, 100, Duration.ofMillis(200))) {
            for (int round = 0; round < rounds; round++) {
                for (int to : new int[] {4, 2}) {
                    epoch++;
                    double[] t = rescale(job, to, epoch);
                    (to == 4 ? upDone : downDone).add(t[0]);
                    (to == 4 ? upCommitted : downCommitted).add(t[1]);
                    lines.add(String.format("round %d: %d -> %d workers: Rescaling ended after %.1f s, every new worker committed"
                            + " after %.1f s", round + 1, to == 4 ? 2 : 4, to, t[0], t[1]));
                    System.out.println("[bench] " + lines.get(lines.size() - 1));
                }
            }
        }
        System.out.printf("[bench] 2 -> 4 workers: median %.1f s to the end of Rescaling, %.1f s to every new worker's first"
                + " commit (%d rounds)%n", median(upDone), median(upCommitted), rounds);
        System.out.printf("[bench] 4 -> 2 workers: median %.1f s to the end of Rescaling, %.1f s to every new worker's first"
                + " commit (%d rounds)%n", median(downDone), median(downCommitted), rounds);
        job.awaitExactTable(E2ESettings.WAIT);
    }

    /**
     * Seconds from kubectl scale to the end of Rescaling, and to every new worker's first commit
     * in the new epoch; prints when the savepoint was taken (the barrier's share).
     */
    private static double[] rescale(E2EJob job, int to, int epoch) {
        long start = System.nanoTime();
        kube.kubectl(null, "scale", "-n", job.namespace, "streamjob/paid-orders", "--replicas=" + to).orThrow();
        job.awaitStatus("the savepoint of epoch " + epoch, E2ESettings.WAIT, s -> (s.epoch != null && s.epoch == epoch)
                || s.condition(ConditionType.Rescaling).map(c -> "StartingWorkers".equals(c.reason)).orElse(false));
        System.out.printf("[bench]   savepoint of epoch %d taken (barrier passed) after %.1f s%n", epoch,
                (System.nanoTime() - start) / 1e9);
        job.awaitStatus("epoch " + epoch + " running", E2ESettings.WAIT, s -> s.epoch != null && s.epoch == epoch
                && s.condition(ConditionType.Rescaling).map(c -> "False".equals(c.status)).orElse(false));
        double done = (System.nanoTime() - start) / 1e9;
        StreamJobStatus committed = job.awaitStatus("every worker of epoch " + epoch + " committed", E2ESettings.WAIT,
                s -> s.workers != null && s.workers.size() == to && s.workers.stream().allMatch(w -> w.batchId != null && w.batchId >= 0));
        return new double[] {done, committed == null ? -1 : (System.nanoTime() - start) / 1e9};
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
