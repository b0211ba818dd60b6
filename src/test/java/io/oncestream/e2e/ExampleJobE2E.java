package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.Awaits;

/**
 * The example StreamJob of deploy/examples/, applied as it is with {@code kubectl apply -f},
 * runs in real containers on the real node: batches advance in {@code kubectl get sj}, the lag
 * reaches 0, {@code kubectl wait} sees it Ready, the table is exactly what the records say, the
 * workers run confined as the restricted profile asks, and deleting it removes its workers.
 */
class ExampleJobE2E extends E2ETest {

    private static final String EXAMPLE = io.oncestream.testing.LocalService.repoDir().resolve(E2EJob.EXAMPLE).toString();

    private static E2EJob job;

    @Test
    void theExampleMovesEveryRecordExactlyOnceAndGoesAwayWhenDeleted() throws Exception {
        job = E2EJob.example(kube, kafka, cassandra, 6, 2000);
        job.produce(3000);
        kube.kubectl(null, "apply", "-n", job.namespace, "-f", EXAMPLE).orThrow();

        // Records keep arriving while `kubectl get sj` is watched: the batch advances.
        List<Long> batches = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            job.produce(500);
            Awaits.until(E2ESettings.WAIT, "a first committed batch", () -> batch(job.kubectlGet()) >= 0);
            batches.add(batch(job.kubectlGet()));
            Thread.sleep(1500); // the interval of watching the column over time, not a synchronization
        }
        assertThat(batches).as("BATCH column of kubectl get sj over time").isSorted();
        assertThat(batches.get(batches.size() - 1)).isGreaterThan(batches.get(0));

        var wait = kube.kubectl(null, "wait", "-n", job.namespace, "--for=condition=Ready", "--timeout=180s", "sj/paid-orders");
        assertThat(wait.exitCode()).as("kubectl wait: " + wait.stderr()).isZero();

        job.awaitExactTable(E2ESettings.WAIT);
        job.awaitStatus("lag 0 and Running", E2ESettings.WAIT, s -> s.lag != null && s.lag == 0 && s.phase == Phase.Running);
        String table = job.kubectlGet();
        System.out.println("[e2e] kubectl get sj:\n" + table);
        assertThat(column(table, "LAG")).isEqualTo("0");
        assertThat(column(table, "PHASE")).isEqualTo("Running");

        List<Long> running = assertWorkersAreConfined();
        assertCheckpointInspectInAWorkersContainer(job.awaitStatus("a status", E2ESettings.WAIT, st -> st.batchId != null).batchId);

        kube.kubectl(null, "delete", "-n", job.namespace, "-f", EXAMPLE, "--wait=true").orThrow();
        Awaits.until(E2ESettings.WAIT, "the StatefulSet and the worker pods to be gone", () ->
                kube.admin().apps().statefulSets().inNamespace(job.namespace).withName(StreamJobResources.statefulSetName(job.name)).get() == null
                        && job.pods().isEmpty());
        Awaits.until(E2ESettings.WAIT, "the worker JVMs to have exited", () ->
                running.stream().noneMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)));
        assertThat(kube.admin().persistentVolumeClaims().inNamespace(job.namespace).list().getItems())
                .as("checkpoint volumes kept (the example says whenDeleted: Retain)")
                .extracting(p -> p.getMetadata().getName())
                .containsExactlyInAnyOrder("checkpoint-paid-orders-0", "checkpoint-paid-orders-1");
    }

    /** runc enforces the restricted profile the operator asks for: non-root, no new privileges, seccomp, no capabilities, read-only root. */
    private static List<Long> assertWorkersAreConfined() {
        List<Long> pids = new ArrayList<>();
        for (Pod pod : job.pods()) {
            OptionalLong pid = node.workerPid(pod);
            pids.add(pid.orElse(-1));
            assertThat(pid).as("worker JVM of " + pod.getMetadata().getName()).isPresent();
            Map<String, String> confinement = node.confinement(pid.getAsLong());
            assertThat(confinement).as("confinement of " + pod.getMetadata().getName())
                    .containsEntry("Uid", "10001")
                    .containsEntry("NoNewPrivs", "1")
                    .containsEntry("Seccomp", "2")
                    .containsEntry("CapEff", "0000000000000000")
                    .containsEntry("rootfs", "ro");
        }
        assertThat(pids).hasSize(2);
        return pids;
    }

    /**
     * {@code checkpoint inspect} as docs/worker.md says to run it, in the container of a running
     * worker: it reads the live checkpoint (the worker holds its lock), and what it reports agrees
     * with the job's status.
     */
    private static void assertCheckpointInspectInAWorkersContainer(long statusBatch) throws Exception {
        var inspect = kube.kubectl(null, "exec", "-n", job.namespace, StreamJobResources.podName(job.name, 0), "--",
                "java", "-Xmx32m", "-jar", "/deployments/quarkus-run.jar", "checkpoint", "inspect", "--json", "/checkpoint");
        assertThat(inspect.exitCode()).as("kubectl exec ... checkpoint inspect: " + inspect.stderr()).isZero();
        JsonNode doc = new ObjectMapper().readTree(inspect.stdout());
        System.out.println("[e2e] checkpoint inspect in " + StreamJobResources.podName(job.name, 0) + ": batches "
                + doc.path("batches").size() + ", next " + doc.at("/next/action").asText() + " " + doc.at("/next/batchId"));
        assertThat(doc.at("/metadata/jobId").asText()).isEqualTo(job.namespace + "/" + job.name);
        assertThat(doc.at("/metadata/workerIndex").asInt()).isZero();
        assertThat(doc.at("/metadata/parallelism").asInt()).isEqualTo(2);
        assertThat(doc.at("/next/action").asText()).isIn("next", "replay");
        long lastCommitted = -1;
        for (JsonNode batch : doc.path("batches")) {
            if (batch.path("committed").asBoolean()) {
                lastCommitted = Math.max(lastCommitted, batch.path("batchId").asLong());
            }
        }
        assertThat(lastCommitted).as("worker 0's last committed batch, at least the job's (the lowest of its workers')")
                .isGreaterThanOrEqualTo(statusBatch);
    }

    /** The BATCH column of {@code kubectl get sj}, or -2 while it is empty. */
    private static long batch(String kubectlGet) {
        String value = column(kubectlGet, "BATCH");
        return value == null || !value.matches("-?\\d+") ? -2 : Long.parseLong(value);
    }

    /** A column of the one-row output of {@code kubectl get sj NAME}, found by its header. */
    static String column(String kubectlGet, String header) {
        List<String> lines = kubectlGet.lines().toList();
        List<String> headers = List.of(lines.get(0).trim().split("\\s+"));
        String[] values = lines.get(1).trim().split("\\s+");
        int i = headers.indexOf(header);
        return i < 0 || i >= values.length || headers.size() != values.length ? null : values[i];
    }
}
