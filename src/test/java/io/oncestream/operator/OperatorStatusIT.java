package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.EngineState;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.AuditLog;

/**
 * The status as a projection of what the workers report: an invalid spec, every phase, suspend
 * and resume, a rescale's barrier and savepoint, a reconcile the API server refuses reported and
 * retried, and Argo CD's health check on status documents of every phase.
 */
class OperatorStatusIT extends OperatorITBase {
    @Test
    void invalidCelEndsAsConfigValidFalseAndCreatesNothing() {
        String ns = kube.createNamespace("op-invalid");
        long mark = audit.mark();
        apply(ns, "bad", Map.of("filter: \"value.status == 'PAID'\"", "filter: \"value.status ==\""));

        StreamJobStatus status = awaitStatus(ns, "bad", s -> s.phase == Phase.Failed);
        assertThat(status.condition(ConditionType.Stalled).orElseThrow().status).as("an invalid spec stalls the job (kstatus: Failed)").isEqualTo("True");
        Condition config = status.condition(ConditionType.ConfigValid).orElseThrow();
        assertThat(config.status).isEqualTo("False");
        assertThat(config.reason).isEqualTo("InvalidSpec");
        assertThat(config.message).startsWith("spec.filter");
        assertThat(admin.apps().statefulSets().inNamespace(ns).list().getItems()).isEmpty();
        assertThat(admin.configMaps().inNamespace(ns).withLabel(StreamJobResources.JOB_LABEL).list().getItems()).isEmpty();
        assertThat(admin.services().inNamespace(ns).list().getItems()).isEmpty();
        assertThat(writes(mark, ns)).as("only the status and events were written")
                .allMatch(r -> "status".equals(r.subresource()) || "events".equals(r.resource()));
        assertThat(events(ns, "bad")).anyMatch(e -> e.startsWith("Warning InvalidSpec spec.filter"));
    }

    @Test
    void statusIsAProjectionOfWorkerProgress() {
        String ns = kube.createNamespace("op-status");
        apply(ns, "paid", Map.of("parallelism: 2", "parallelism: 2\n  trigger: {availableNow: true}"));
        runHealthyWorkers(ns, "paid", 2);

        StreamJobStatus running = awaitStatus(ns, "paid", s -> s.phase == Phase.Running);
        assertThat(running.observedGeneration).isEqualTo(job(ns, "paid").getMetadata().getGeneration());
        assertThat(running.batchId).isEqualTo(11L);
        assertThat(running.lag).isEqualTo(20L);
        assertThat(running.committedOffsets).isEqualTo(Map.of("orders", Map.of("0", 500L, "1", 480L)));
        assertThat(running.totals.read).isEqualTo(2000L);
        assertThat(running.rates.inputRecordsPerSecond).isEqualTo(501L);
        assertThat(running.rates.batchRecordsPerSecond).isEqualTo(2000L);
        assertThat(running.workers).extracting(w -> w.name + " " + w.state + " " + w.ready)
                .containsExactly("paid-0 IDLE true", "paid-1 WRITING true");
        assertThat(running.condition(ConditionType.Ready).orElseThrow().status).isEqualTo("True");
        String configSince = running.condition(ConditionType.ConfigValid).orElseThrow().lastTransitionTime;

        // Cassandra down for worker 1.
        workers.answer("paid-1", ProgressDocuments.json(ns + "/paid", 1, EngineState.WAITING_FOR_SINK, 11, Map.of("orders-1", new long[] {480, 900}),
                false, "Cassandra: No node was available"));
        StreamJobStatus sinkDown = awaitStatus(ns, "paid", s -> s.phase == Phase.Degraded);
        assertThat(sinkDown.condition(ConditionType.SinkAvailable).orElseThrow().status).isEqualTo("False");
        assertThat(sinkDown.condition(ConditionType.SinkAvailable).orElseThrow().message).contains("paid-1: Cassandra: No node was available");
        assertThat(sinkDown.condition(ConditionType.Progressing).orElseThrow().status).isEqualTo("False");
        assertThat(sinkDown.condition(ConditionType.ConfigValid).orElseThrow().lastTransitionTime).as("unflipped conditions keep their time")
                .isEqualTo(configSince);

        // Worker 1 stops answering.
        workers.stop("paid-1");
        StreamJobStatus unreachable = awaitStatus(ns, "paid", s -> s.workers != null && s.workers.size() == 2
                && "Unreachable".equals(s.workers.get(1).state));
        assertThat(unreachable.phase).isEqualTo(Phase.Degraded);
        assertThat(unreachable.workers.get(1).lastError).contains("/progress failed");

        // Both drained their partitions (availableNow).
        workers.serve("paid-1", ProgressDocuments.json(ns + "/paid", 1, EngineState.COMPLETED, 12, Map.of("orders-1", new long[] {900, 900}), true, null));
        workers.answer("paid-0", ProgressDocuments.json(ns + "/paid", 0, EngineState.COMPLETED, 12, Map.of("orders-0", new long[] {520, 520}), true, null));
        StreamJobStatus completed = awaitStatus(ns, "paid", s -> s.phase == Phase.Completed);
        assertThat(completed.condition(ConditionType.Ready).orElseThrow().status).as("a completed job is where its spec asks (kstatus: Current)")
                .isEqualTo("True");
        assertThat(completed.lag).isZero();
        // A drained availableNow job stops its workers and keeps its checkpoints and its status.
        Awaits.until(WAIT, "the drained job's workers stopped", () ->
                admin.apps().statefulSets().inNamespace(ns).withName("paid").get().getSpec().getReplicas() == 0);
        assertThat(pvcs(ns, "paid")).hasSize(2);
        assertThat(job(ns, "paid").getStatus().phase).isEqualTo(Phase.Completed);
        assertThat(job(ns, "paid").getStatus().totals.read).isEqualTo(2000L);

        assertThat(events(ns, "paid")).anyMatch(e -> e.startsWith("Normal PhaseRunning"))
                .anyMatch(e -> e.startsWith("Warning PhaseDegraded")).anyMatch(e -> e.startsWith("Normal PhaseCompleted"));
    }

    @Test
    void suspendStopsTheWorkersAndKeepsCheckpointsResumeBringsThemBack() {
        String ns = kube.createNamespace("op-suspend");
        apply(ns, "nightly", Map.of());
        Awaits.until(WAIT, "two checkpoint PVCs", () -> pvcs(ns, "nightly").size() == 2);
        Set<String> volumes = pvcUids(ns, "nightly");

        apply(ns, "nightly", Map.of("parallelism: 2", "parallelism: 2\n  suspend: true"));
        awaitStatus(ns, "nightly", s -> s.phase == Phase.Suspended);
        Awaits.until(WAIT, "no worker pods", () -> admin.apps().statefulSets().inNamespace(ns).withName("nightly").get()
                .getSpec().getReplicas() == 0 && workerPods(ns, "nightly").isEmpty());
        assertThat(pvcUids(ns, "nightly")).as("checkpoints kept while suspended").isEqualTo(volumes);

        apply(ns, "nightly", Map.of());
        Awaits.until(WAIT, "two worker pods again", () -> workerPods(ns, "nightly").size() == 2);
        assertThat(pvcUids(ns, "nightly")).as("the same checkpoints are used again").isEqualTo(volumes);
        assertThat(awaitStatus(ns, "nightly", s -> s.phase != Phase.Suspended).phase).isEqualTo(Phase.Pending);
    }

    /**
     * The API server refuses a write (a ResourceQuota allows no Service): the status says so,
     * naming the refusal, an event records it, and when the quota goes, 35 s later, a retry
     * succeeds.
     */
    @Test
    void aRefusedWriteIsReportedInTheStatusAndRetried() throws InterruptedException {
        String ns = kube.createNamespace("op-refused");
        kube.kubectl("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-services, namespace: " + ns
                + "}\nspec: {hard: {services: \"0\"}}\n", "apply", "-f", "-").orThrow();
        long applied = System.nanoTime();
        apply(ns, "refused", Map.of("parallelism: 2", "parallelism: 1"));
        StreamJobStatus failed = awaitStatus(ns, "refused", s -> s.condition(ConditionType.Ready).filter(c -> "ReconcileFailed".equals(c.reason)).isPresent());
        Condition ready = failed.condition(ConditionType.Ready).orElseThrow();
        assertThat(ready.status).isEqualTo("False");
        assertThat(ready.message).contains("refused-workers").contains("exceeded quota").contains("HTTP 403");
        assertThat(failed.observedGeneration).as("a failed reconcile observed nothing").isNull();
        Awaits.until(WAIT, "a ReconcileFailed event", () -> events(ns, "refused").stream()
                .anyMatch(e -> e.startsWith("Warning ReconcileFailed") && e.contains("exceeded quota")));

        // Refused for longer than the SDK's default retries last (5 attempts from 2 s, x1.5: about
        // 26 s, then nothing): only the configured retries (up to once a minute, without end)
        // bring the job back once the quota is gone.
        long refusedFor = Duration.ofSeconds(35).toNanos() - (System.nanoTime() - applied);
        if (refusedFor > 0) {
            Thread.sleep(refusedFor / 1_000_000); // the fault's duration, not a synchronization: the quota refuses for 35 s
        }
        admin.resourceQuotas().inNamespace(ns).withName("no-services").delete();
        StreamJobStatus recovered = awaitStatus(ns, "refused", s -> s.phase == Phase.Pending && s.observedGeneration != null);
        assertThat(recovered.condition(ConditionType.Ready).orElseThrow().reason).isEqualTo("WorkersStarting");
        assertThat(recovered.condition(ConditionType.SinkAvailable).orElseThrow().status).as("no worker has reported").isEqualTo("Unknown");
        assertThat(admin.services().inNamespace(ns).withName(StreamJobResources.serviceName("refused")).get()).isNotNull();
    }

    /**
     * A rescale from the operator's side: the running configuration is kept while every worker
     * is asked for the barrier; nothing is scaled until all have sealed; then the savepoint
     * ConfigMap (immutable) comes first, the worker ConfigMap with it and three replicas after,
     * the parked pods are deleted, and the rescale completes when the new workers report in
     * epoch 1. Every call within the committed RBAC.
     */
    @Test
    void aRescaleWaitsForEveryWorkersSealThenTakesTheSavepointAndStartsTheNewShape() {
        String ns = kube.createNamespace("op-rescale");
        apply(ns, "grow", Map.of());
        runHealthyWorkers(ns, "grow", 2);
        awaitStatus(ns, "grow", s -> s.phase == Phase.Running);
        Awaits.until(WAIT, "two checkpoint PVCs", () -> pvcs(ns, "grow").size() == 2);
        String config = admin.configMaps().inNamespace(ns).withName("grow-config").get().getData().get(StreamJobResources.CONFIG_KEY);
        Set<String> oldPods = workerPods(ns, "grow").stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
        long mark = audit.mark();

        apply(ns, "grow", Map.of("parallelism: 2", "parallelism: 3"));
        StreamJobStatus barrier = awaitStatus(ns, "grow", s -> s.phase == Phase.Rescaling);
        Condition rescaling = barrier.condition(ConditionType.Rescaling).orElseThrow();
        assertThat(rescaling.reason).isEqualTo("StoppingAtBarrier");
        assertThat(rescaling.message).startsWith("2 -> 3 workers, epoch 1: stopping at a batch boundary (0 of 2 workers sealed");
        Awaits.until(WAIT, "both workers asked for the barrier of epoch 1", () ->
                workers.barrierRequests("grow-0").contains("POST epoch=1") && workers.barrierRequests("grow-1").contains("POST epoch=1"));
        // One worker sealed: still nothing changes.
        workers.answer("grow-0", ProgressDocuments.sealed(ns + "/grow", 0, 12, Map.of("orders-0", new long[] {500, 520}), 1));
        awaitStatus(ns, "grow", s -> s.condition(ConditionType.Rescaling).map(c -> c.message.contains("(1 of 2 workers sealed"))
                .orElse(false));
        assertThat(admin.apps().statefulSets().inNamespace(ns).withName("grow").get().getSpec().getReplicas()).isEqualTo(2);
        assertThat(admin.configMaps().inNamespace(ns).withName("grow-savepoint-1").get()).isNull();
        assertThat(admin.configMaps().inNamespace(ns).withName("grow-config").get().getData())
                .containsEntry(StreamJobResources.CONFIG_KEY, config).doesNotContainKey("savepoint.json");

        // Both sealed: the savepoint, then the new shape.
        workers.answer("grow-1", ProgressDocuments.sealed(ns + "/grow", 1, 11, Map.of("orders-1", new long[] {480, 480}), 1));
        ConfigMap savepointMap = await(() -> admin.configMaps().inNamespace(ns).withName("grow-savepoint-1").get(), "the savepoint");
        assertThat(savepointMap.getImmutable()).isTrue();
        Savepoint savepoint = Savepoint.decode(java.nio.file.Path.of("grow-savepoint-1"), savepointMap.getData().get("savepoint.json"));
        assertThat(savepoint).isEqualTo(new Savepoint(ns + "/grow", 1, 2, 3, Map.of("orders-0", new ChainPoint(500, 1500),
                "orders-1", new ChainPoint(480, 1480)), List.of(12L, 11L)));
        Awaits.until(WAIT, "three replicas with the savepoint in their configuration", () ->
                admin.apps().statefulSets().inNamespace(ns).withName("grow").get().getSpec().getReplicas() == 3
                        && savepointMap.getData().get("savepoint.json").equals(
                                admin.configMaps().inNamespace(ns).withName("grow-config").get().getData().get("savepoint.json")));
        Awaits.until(WAIT, "the parked pods deleted", () -> workerPods(ns, "grow").stream()
                .noneMatch(p -> oldPods.contains(p.getMetadata().getUid())));
        // Their processes are gone with them; the new pods' workers start in epoch 1.
        workers.stop("grow-0");
        workers.stop("grow-1");
        // Playing the kubelet for whichever pods the StatefulSet controller makes (a pod it recreated
        // from the old revision is replaced again by its rolling update).
        for (int i = 0; i < 3; i++) {
            workers.serve("grow-" + i, ProgressDocuments.json(ns + "/grow", i, EngineState.IDLE, 0,
                    Map.of("orders-" + i, new long[] {500, 500}), true, null, 1, null));
        }
        Awaits.until(WAIT, "the rescale to complete", () -> {
            for (Pod pod : workerPods(ns, "grow")) {
                if (pod.getStatus() == null || !"Running".equals(pod.getStatus().getPhase())) {
                    workers.markRunning(admin, ns, pod.getMetadata().getName(), true);
                }
            }
            StreamJobStatus s = job(ns, "grow").getStatus();
            return s != null && s.condition(ConditionType.Rescaling).map(c -> "RescaleCompleted".equals(c.reason)).orElse(false);
        });
        StreamJobStatus done = awaitStatus(ns, "grow", s -> s.phase == Phase.Running && s.condition(ConditionType.Rescaling)
                .map(c -> "RescaleCompleted".equals(c.reason)).orElse(false));
        assertThat(done.epoch).isEqualTo(1);
        assertThat(done.replicas).isEqualTo(3);
        assertThat(done.condition(ConditionType.Rescaling).orElseThrow().message)
                .isEqualTo("rescaled from 2 to 3 workers (epoch 1, savepoint after batches [12, 11])");
        assertThat(events(ns, "grow")).anyMatch(e -> e.startsWith("Normal RescaleStarted 2 -> 3 workers"))
                .anyMatch(e -> e.startsWith("Normal SavepointTaken savepoint of epoch 1 taken after batches [12, 11]"))
                .anyMatch(e -> e.startsWith("Normal RescaleCompleted rescaled from 2 to 3 workers"));
        List<AuditLog.Request> writes = writes(mark, ns);
        assertThat(count(writes, "pods")).as("parked pods deleted").isGreaterThanOrEqualTo(2);
        assertThat(writes).filteredOn(r -> "configmaps".equals(r.resource()) && "create".equals(r.verb())).hasSize(1);
        assertThat(audit.since(mark, r -> r.user().equals(OPERATOR_USER) && r.code() == 403)).isEmpty();
    }

    /**
     * docs/gitops.md's Argo CD health check on status documents the operator wrote, one per phase:
     * three jobs of this test's own driven through every phase by their workers' reports and spec
     * edits.
     */
    @Test
    void theArgoCdHealthCheckReadsWhatTheOperatorWrote() throws Exception {
        String ns = kube.createNamespace("op-argo");
        Map<Phase, String> written = new java.util.EnumMap<>(Phase.class);
        java.util.function.BiConsumer<String, Phase> record = (job, phase) -> written.put(phase,
                io.fabric8.kubernetes.client.utils.Serialization.asJson(awaitJob(ns, job, s -> s.phase == phase)));

        // Suspended from its first apply.
        apply(ns, "paused", Map.of("parallelism: 2", "parallelism: 1\n  suspend: true"));
        // Pending, Running, Degraded, Failed and Completed: a drain (availableNow) whose workers report each state.
        apply(ns, "drains", Map.of("parallelism: 2", "parallelism: 2\n  trigger: {availableNow: true}"));
        record.accept("drains", Phase.Pending);
        runHealthyWorkers(ns, "drains", 2);
        record.accept("drains", Phase.Running);
        workers.answer("drains-1", ProgressDocuments.json(ns + "/drains", 1, EngineState.WAITING_FOR_SINK, 11,
                Map.of("orders-1", new long[] {480, 900}), false, "Cassandra: No node was available"));
        record.accept("drains", Phase.Degraded);
        workers.answer("drains-1", ProgressDocuments.json(ns + "/drains", 1, EngineState.FAILED, 11,
                Map.of("orders-1", new long[] {480, 900}), true, "a record the filter cannot read"));
        record.accept("drains", Phase.Failed);
        workers.answer("drains-1", ProgressDocuments.json(ns + "/drains", 1, EngineState.COMPLETED, 12,
                Map.of("orders-1", new long[] {900, 900}), true, null));
        workers.answer("drains-0", ProgressDocuments.json(ns + "/drains", 0, EngineState.COMPLETED, 12,
                Map.of("orders-0", new long[] {520, 520}), true, null));
        record.accept("drains", Phase.Completed);
        // Rescaling: a running job asked for a third worker (its workers never seal, so it stays there).
        apply(ns, "grows", Map.of());
        runHealthyWorkers(ns, "grows", 2);
        awaitStatus(ns, "grows", s -> s.phase == Phase.Running);
        apply(ns, "grows", Map.of("parallelism: 2", "parallelism: 3"));
        record.accept("grows", Phase.Rescaling);
        record.accept("paused", Phase.Suspended);
        assertThat(written.keySet()).as("phases written").containsExactlyInAnyOrder(Phase.values());

        Map<Phase, String> expected = Map.of(Phase.Pending, "Progressing", Phase.Running, "Healthy", Phase.Completed, "Healthy",
                Phase.Degraded, "Degraded", Phase.Failed, "Degraded", Phase.Suspended, "Suspended", Phase.Rescaling, "Progressing");
        ArgoHealthCheck check = ArgoHealthCheck.fromDocs();
        Path work = Files.createDirectories(install.workDir().resolve("argo"));
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (Phase phase : Phase.values()) {
            ArgoHealthCheck.Health health = check.evaluate(json.readTree(written.get(phase)), work);
            System.out.println("[operator] Argo CD health of a " + phase + " job: " + health);
            assertThat(health.status()).as(phase + " -> " + health).isEqualTo(expected.get(phase));
            assertThat(health.message()).as(phase + " message").isNotBlank().isNotEqualTo("nil");
        }
        var stale = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(written.get(Phase.Running));
        ((com.fasterxml.jackson.databind.node.ObjectNode) stale.get("metadata"))
                .put("generation", stale.at("/status/observedGeneration").asLong() + 1);
        assertThat(check.evaluate(stale, work).status()).as("a spec change not yet reconciled").isEqualTo("Progressing");
        var fresh = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(written.get(Phase.Running));
        fresh.remove("status");
        assertThat(check.evaluate(fresh, work).status()).as("no status yet").isEqualTo("Progressing");
    }
}
