package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalNode;
import io.oncestream.testing.NodeExtension;
import io.oncestream.testing.OperatorInstall;
import io.oncestream.testing.OperatorProcess;

/**
 * Workers die while records keep arriving: SIGKILLs of the worker JVMs in their containers at
 * random moments (the kubelet restarts them) and {@code kubectl delete pod}s (the StatefulSet
 * controller recreates them). The table ends exactly as the records say, and the consumer
 * group, sampled all along, never runs ahead of the table.
 */
@ExtendWith({KubeExtension.class, KafkaExtension.class, CassandraExtension.class, NodeExtension.class})
class WorkerKillsE2E {

    private static final int KILLS = 10;
    private static final int POD_DELETES = 3;

    private static OperatorProcess operator;
    private static KubeCluster kube;
    private static LocalNode node;
    private static E2EJob job;

    @BeforeAll
    static void start(KubeCluster cluster, KafkaBroker kafka, CassandraNode cassandra, LocalNode localNode) {
        kube = cluster;
        node = localNode;
        operator = OperatorInstall.install(kube, "e2e-kills").startLeading("operator.log", E2ESettings.OPERATOR, E2ESettings.WAIT);
        job = E2EJob.own(kube, kafka, cassandra, "e2e-kills", 6, 4000);
    }

    @AfterAll
    static void stop() {
        E2EJob.deleteAll(kube);
        if (operator != null) {
            operator.close();
        }
    }

    @Test
    void killedAndDeletedWorkersLoseNothingAndDoubleNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("[e2e] WorkerKillsE2E random seed " + seed);
        Random random = new Random(seed);
        job.produce(2000);
        job.apply(Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 500", "interval: 1s", "interval: 300ms"));
        job.awaitStatus("two workers committing", E2ESettings.WAIT, s -> s.batchId != null && s.batchId >= 1);

        List<String> violations = new ArrayList<>();
        int kills = 0;
        int deletes = 0;
        try (Producing producing = new Producing(job, 150, Duration.ofMillis(200))) {
            for (int i = 0; i < POD_DELETES; i++) {
                String pod = "paid-orders-" + random.nextInt(2);
                Thread.sleep(1000 + random.nextInt(3000));
                kube.kubectl(null, "delete", "pod", "-n", job.namespace, pod, "--wait=false").orThrow();
                deletes++;
                violations.addAll(job.groupOffsetsAheadOfTable());
            }
            while (kills < KILLS) {
                int index = random.nextInt(2);
                String pod = "paid-orders-" + index;
                Awaits.until(E2ESettings.WAIT, "the worker of " + pod + " to run", () -> node.workerPid(job.pod(index)).isPresent());
                Thread.sleep(500 + random.nextInt(3500));
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
