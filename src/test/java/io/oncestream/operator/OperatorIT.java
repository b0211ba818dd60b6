package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.TestManifests;
import io.oncestream.engine.EngineState;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.OperatorInstall;
import io.oncestream.testing.OperatorProcess;
import io.oncestream.testing.TextEdits;

/**
 * The packaged operator on the real API server and controller-manager, running as its own
 * ServiceAccount with the committed RBAC (deploy/operator/rbac.yaml). The API server's audit
 * log is the witness: it counts the operator's writes and any call its RBAC forbids fails the
 * test. Workers are HTTP servers replaying progress documents in the worker's format.
 */
@ExtendWith(KubeExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorIT {

    private static final String OPERATOR_NAMESPACE = OperatorInstall.NAMESPACE;
    private static final String OPERATOR_USER = OperatorInstall.USER;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Map<String, String> SETTINGS = Map.of(
            "oncestream.operator.poll-interval", "1s",
            "oncestream.operator.poll-timeout", "1s",
            "oncestream.operator.leader-election.lease-duration", "6s",
            "oncestream.operator.leader-election.renew-deadline", "4s",
            "oncestream.operator.leader-election.retry-period", "1s");


    private static KubeCluster kube;
    private static KubernetesClient admin;
    private static AuditLog audit;
    private static long runMark;
    private static OperatorInstall install;
    private static OperatorProcess operator;

    private final FakeWorkers workers = new FakeWorkers();
    /** Namespaces where a ResourceQuota refuses writes on purpose (403 there is the test, not the RBAC). */
    private static final Set<String> QUOTA_REFUSALS = new java.util.concurrent.CopyOnWriteArraySet<>();
    /** The last StreamJob document seen in each phase by awaitStatus (for the Argo CD health check). */
    private static final Map<Phase, String> SEEN = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeAll
    static void startOperator(KubeCluster cluster) throws Exception {
        kube = cluster;
        admin = kube.admin();
        install = OperatorInstall.install(kube, "operator-it");
        audit = kube.auditLog();
        runMark = audit.mark();
        operator = install.startLeading("operator-1.log", SETTINGS, WAIT);
    }

    @AfterEach
    void noCallWasForbidden() {
        workers.close();
        List<AuditLog.Request> forbidden = audit.since(runMark, r -> r.user().equals(OPERATOR_USER) && r.code() == 403
                && !QUOTA_REFUSALS.contains(r.namespace()));
        assertThat(forbidden).as("calls the operator's RBAC refused").isEmpty();
    }

    @AfterAll
    static void stopOperator() {
        if (operator != null) {
            operator.close();
        }
    }

    @Test
    @Order(1)
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
    @Order(2)
    void createsOwnedObjectsSettlesAndAnUnchangedJobIsNeverWrittenAgain() {
        String ns = kube.createNamespace("op-owned");
        long mark = audit.mark();
        apply(ns, "orders", Map.of());

        StatefulSet sts = await(() -> admin.apps().statefulSets().inNamespace(ns).withName("orders").get(), "StatefulSet");
        ConfigMap cm = await(() -> admin.configMaps().inNamespace(ns).withName("orders-config").get(), "ConfigMap");
        Service svc = await(() -> admin.services().inNamespace(ns).withName("orders-workers").get(), "Service");
        StreamJob job = job(ns, "orders");
        for (HasMetadata owned : List.of(sts, cm, svc)) {
            assertThat(owned.getMetadata().getOwnerReferences()).as(owned.getKind() + " is owned by its StreamJob")
                    .anyMatch(o -> o.getUid().equals(job.getMetadata().getUid()) && Boolean.TRUE.equals(o.getController()));
        }
        JobConfig applied = JobConfigs.parse(cm.getData().get(StreamJobResources.CONFIG_KEY));
        assertThat(applied.source().topics()).containsExactly("orders");
        assertThat(applied.parallelism()).isEqualTo(2);
        assertThat(cm.getData().get(StreamJobResources.CONFIG_KEY)).doesNotContain("password");
        assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
        assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Delete");
        assertThat(sts.getSpec().getVolumeClaimTemplates()).extracting(v -> v.getMetadata().getName()).containsExactly("checkpoint");
        assertThat(sts.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry(StreamJobResources.CONFIG_HASH_ANNOTATION, WorkerConfigMaps.hash(applied));
        assertThat(sts.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken()).isFalse();

        // Workers report; the job settles as Running.
        runHealthyWorkers(ns, "orders", 2);
        awaitStatus(ns, "orders", s -> s.phase == Phase.Running);
        List<AuditLog.Request> creation = writes(mark, ns);
        assertThat(count(creation, "configmaps")).as("ConfigMap writes " + creation).isEqualTo(1);
        assertThat(count(creation, "services")).as("Service writes " + creation).isEqualTo(1);
        assertThat(count(creation, "statefulsets")).as("StatefulSet writes " + creation).isEqualTo(1);

        // Several more reconciles (each polls every worker) of the unchanged job: no write at all.
        long settled = audit.mark();
        int before = workers.requests("orders-0");
        Awaits.until(WAIT, "three more reconciles", () -> workers.requests("orders-0") >= before + 3);
        assertThat(writes(settled, ns)).as("writes of reconciles of an unchanged job, status included").isEmpty();

        // The controller-manager's garbage collector removes everything with the job; PVCs follow "Delete".
        Awaits.until(WAIT, "checkpoint PVCs", () -> pvcs(ns, "orders").size() == 2);
        admin.resources(StreamJob.class).inNamespace(ns).withName("orders").delete();
        Awaits.until(WAIT, "garbage collection of the job's objects", () ->
                admin.apps().statefulSets().inNamespace(ns).withName("orders").get() == null
                        && admin.configMaps().inNamespace(ns).withName("orders-config").get() == null
                        && admin.services().inNamespace(ns).withName("orders-workers").get() == null);
        Awaits.until(WAIT, "PVCs deleted (whenDeleted: Delete)", () -> pvcs(ns, "orders").isEmpty());
    }

    @Test
    @Order(3)
    void retainedCheckpointsOutliveTheirJob() {
        String ns = kube.createNamespace("op-retain");
        apply(ns, "kept", Map.of("parallelism: 2", "parallelism: 1", "whenDeleted: Delete", "whenDeleted: Retain"));
        Awaits.until(WAIT, "checkpoint PVC", () -> pvcs(ns, "kept").size() == 1);
        admin.resources(StreamJob.class).inNamespace(ns).withName("kept").delete();
        Awaits.until(WAIT, "StatefulSet collected", () -> admin.apps().statefulSets().inNamespace(ns).withName("kept").get() == null);
        assertThat(pvcs(ns, "kept")).as("whenDeleted: Retain keeps the checkpoint").hasSize(1);
    }

    @Test
    @Order(4)
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
        assertThat(running.rates.inputRecordsPerSecond).isEqualTo(2000.0);
        assertThat(running.workers).extracting(w -> w.name + " " + w.state + " " + w.ready)
                .containsExactly("paid-0 IDLE true", "paid-1 WRITING true");
        assertThat(running.condition(ConditionType.Ready).orElseThrow().status).isEqualTo("True");
        String configSince = running.condition(ConditionType.ConfigValid).orElseThrow().lastTransitionTime;

        // Cassandra down for worker 1.
        workers.answer("paid-1", ProgressDocuments.json(EngineState.WAITING_FOR_SINK, 11, Map.of("orders-1", new long[] {480, 900}),
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
        workers.serve("paid-1", ProgressDocuments.json(EngineState.COMPLETED, 12, Map.of("orders-1", new long[] {900, 900}), true, null));
        workers.answer("paid-0", ProgressDocuments.json(EngineState.COMPLETED, 12, Map.of("orders-0", new long[] {520, 520}), true, null));
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
    @Order(5)
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

    @Test
    @Order(6)
    void aSpecChangeRollsTheWorkers() {
        String ns = kube.createNamespace("op-roll");
        apply(ns, "roll", Map.of());
        Awaits.until(WAIT, "two worker pods", () -> workerPods(ns, "roll").size() == 2);
        StatefulSet before = admin.apps().statefulSets().inNamespace(ns).withName("roll").get();
        String oldHash = before.getSpec().getTemplate().getMetadata().getAnnotations().get(StreamJobResources.CONFIG_HASH_ANNOTATION);
        String oldRevision = admin.pods().inNamespace(ns).withName("roll-1").get().getMetadata().getLabels()
                .get("controller-revision-hash");

        apply(ns, "roll", Map.of("filter: \"value.status == 'PAID'\"", "filter: \"value.status == 'SHIPPED'\""));
        Awaits.until(WAIT, "new worker configuration", () -> admin.configMaps().inNamespace(ns).withName("roll-config").get()
                .getData().get(StreamJobResources.CONFIG_KEY).contains("SHIPPED"));
        StatefulSet after = await(() -> {
            StatefulSet s = admin.apps().statefulSets().inNamespace(ns).withName("roll").get();
            return oldHash.equals(s.getSpec().getTemplate().getMetadata().getAnnotations()
                    .get(StreamJobResources.CONFIG_HASH_ANNOTATION)) ? null : s;
        }, "a new config hash in the pod template");
        assertThat(after.getMetadata().getGeneration()).isGreaterThan(before.getMetadata().getGeneration());
        // The StatefulSet controller rolls: the highest ordinal is replaced by a pod of the new revision.
        Awaits.until(WAIT, "roll-1 replaced by a pod of the new revision", () -> {
            Pod pod = admin.pods().inNamespace(ns).withName("roll-1").get();
            StatefulSet s = admin.apps().statefulSets().inNamespace(ns).withName("roll").get();
            return pod != null && s.getStatus() != null && s.getStatus().getUpdateRevision() != null
                    && s.getStatus().getUpdateRevision().endsWith(pod.getMetadata().getLabels().get("controller-revision-hash"))
                    && !Objects.equals(oldRevision, pod.getMetadata().getLabels().get("controller-revision-hash"));
        });
    }

    @Test
    @Order(7)
    void changingTopicsTableOrParallelismUnderCheckpointsIsRefused() {
        String ns = kube.createNamespace("op-refuse");
        apply(ns, "fixed", Map.of());
        Awaits.until(WAIT, "two checkpoint PVCs", () -> pvcs(ns, "fixed").size() == 2);
        awaitStatus(ns, "fixed", s -> s.phase == Phase.Pending);
        long stsGeneration = admin.apps().statefulSets().inNamespace(ns).withName("fixed").get().getMetadata().getGeneration();
        String cmData = admin.configMaps().inNamespace(ns).withName("fixed-config").get().getData().get(StreamJobResources.CONFIG_KEY);
        long mark = audit.mark();

        apply(ns, "fixed", Map.of("topics: [orders]", "topics: [orders, refunds]", "parallelism: 2", "parallelism: 3"));
        StreamJobStatus refused = awaitStatus(ns, "fixed", s -> "ChangeRefused".equals(s.condition(ConditionType.ConfigValid).orElseThrow().reason));
        Condition config = refused.condition(ConditionType.ConfigValid).orElseThrow();
        assertThat(config.status).isEqualTo("False");
        assertThat(config.message).contains("spec.source.kafka.topics changed from [orders] to [orders, refunds]")
                .contains("spec.parallelism changed from 2 to 3").contains("workers keep running the previous configuration");
        assertThat(refused.observedGeneration).isEqualTo(job(ns, "fixed").getMetadata().getGeneration());
        assertThat(writes(mark, ns)).as("nothing but status and events written for a refused change")
                .allMatch(r -> "status".equals(r.subresource()) || "events".equals(r.resource()));
        assertThat(admin.apps().statefulSets().inNamespace(ns).withName("fixed").get().getMetadata().getGeneration())
                .as("StatefulSet spec untouched").isEqualTo(stsGeneration);
        assertThat(admin.configMaps().inNamespace(ns).withName("fixed-config").get().getData().get(StreamJobResources.CONFIG_KEY))
                .as("worker configuration untouched").isEqualTo(cmData);
        assertThat(events(ns, "fixed")).anyMatch(e -> e.startsWith("Warning ChangeRefused spec.source.kafka.topics"));

        apply(ns, "fixed", Map.of());
        StreamJobStatus reverted = awaitStatus(ns, "fixed", s -> "True".equals(s.condition(ConditionType.ConfigValid).orElseThrow().status));
        assertThat(reverted.phase).isEqualTo(Phase.Pending);
    }

    @Test
    @Order(8)
    void metricsAndHealthProbes() throws Exception {
        var ready = operator.get("/q/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("\"streamjob\": \"OK\"");
        assertThat(operator.get("/q/health/live").statusCode()).isEqualTo(200);
        String metrics = operator.get("/q/metrics").body();
        assertThat(metric(metrics, "oncestream_operator_reconciliations_total")).isPositive();
        assertThat(metric(metrics, "oncestream_operator_progress_polls_total{result=\"answered\"}")).isPositive();
        assertThat(metric(metrics, "oncestream_operator_refused_changes_total")).isPositive();
        assertThat(metrics).contains("oncestream_operator_streamjobs{phase=\"Pending\"}");
    }

    /**
     * The API server refuses a write (a ResourceQuota allows no Service): the status says so,
     * naming the refusal, an event records it, and when the quota goes, 35 s later, a retry
     * succeeds.
     */
    @Test
    @Order(9)
    void aRefusedWriteIsReportedInTheStatusAndRetried() throws InterruptedException {
        String ns = kube.createNamespace("op-refused");
        QUOTA_REFUSALS.add(ns);
        kube.kubectl("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-services, namespace: " + ns
                + "}\nspec: {hard: {services: \"0\"}}\n", "apply", "-f", "-").orThrow();
        long applied = System.nanoTime();
        apply(ns, "refused", Map.of("parallelism: 2", "parallelism: 1"));
        StreamJobStatus failed = awaitStatus(ns, "refused", s -> "ReconcileFailed".equals(reasonOf(s, "Ready")));
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
            Thread.sleep(refusedFor / 1_000_000);
        }
        admin.resourceQuotas().inNamespace(ns).withName("no-services").delete();
        StreamJobStatus recovered = awaitStatus(ns, "refused", s -> s.phase == Phase.Pending && s.observedGeneration != null);
        assertThat(reasonOf(recovered, "Ready")).isEqualTo("WorkersStarting");
        assertThat(recovered.condition(ConditionType.SinkAvailable).orElseThrow().status).as("no worker has reported").isEqualTo("Unknown");
        assertThat(admin.services().inNamespace(ns).withName(StreamJobResources.serviceName("refused")).get()).isNotNull();
    }

    private static String reasonOf(StreamJobStatus s, String type) {
        return s.conditions == null ? null : s.conditions.stream().filter(c -> c.type.equals(type)).map(c -> c.reason)
                .findFirst().orElse(null);
    }

    @Test
    @Order(10)
    void onlyTheLeaseHolderReconcilesAndAStandbyTakesOver() throws Exception {
        Lease lease = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get();
        String leader = lease.getSpec().getHolderIdentity();
        assertThat(operator.log()).contains("as " + leader);

        OperatorProcess standby = install.start("operator-2.log", SETTINGS);
        try {
            standby.awaitOutput("leader election on lease", WAIT);
            String ns = kube.createNamespace("op-failover");
            apply(ns, "first", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "first", s -> s.phase == Phase.Pending);
            assertThat(standby.log()).as("the standby does not reconcile").doesNotContain("Started event processing");

            operator.kill9();
            standby.awaitOutput("Started event processing for controller: streamjob", WAIT);
            String newLeader = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                    .getSpec().getHolderIdentity();
            assertThat(newLeader).isNotEqualTo(leader);
            apply(ns, "second", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "second", s -> s.phase == Phase.Pending);
        } finally {
            operator.close();
            operator = standby;
        }
    }

    /**
     * SIGTERM to a leader: it stops (the SDK's stop-leading exit used to deadlock in the shutdown
     * hook, so the process never ended), releases the lease on its way out, and the standby takes
     * over at its next retry instead of waiting for the lease to expire.
     */
    /**
     * As a GitOps tool syncs: server-side apply under its own field manager, the operator
     * reconciles and reports, the same manifest applied again: no conflict, no drift, and no
     * field of the spec owned by anyone but the tool.
     */
    @Test
    @Order(11)
    void aGitOpsToolsServerSideApplyNeitherConflictsNorDrifts() {
        String ns = kube.createNamespace("op-gitops");
        String manifest = TestManifests.streamJob("synced", ns, Map.of()) + "  parallelism: 1\n"
                + "  worker: {nodeSelector: {oncestream.io/test-node: none}}\n";
        String[] ssa = {"apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"};
        kube.kubectl(manifest, ssa).orThrow();
        awaitStatus(ns, "synced", s -> s.phase == Phase.Pending && s.observedGeneration != null);
        long generation = job(ns, "synced").getMetadata().getGeneration();

        var again = kube.kubectl(manifest, ssa);
        assertThat(again.exitCode()).as("re-apply: " + again.stderr()).isZero();
        var diff = kube.kubectl(manifest, "diff", "--server-side", "--field-manager=argocd-controller", "-f", "-");
        assertThat(diff.exitCode()).as("kubectl diff --server-side (0: no difference)\n" + diff.stdout() + diff.stderr()).isZero();
        StreamJob synced = job(ns, "synced");
        assertThat(synced.getMetadata().getGeneration()).isEqualTo(generation);
        assertThat(synced.getMetadata().getManagedFields()).as("managers of the StreamJob's fields")
                .allSatisfy(m -> {
                    if (!m.getManager().equals("argocd-controller")) {
                        assertThat(m.getSubresource()).as(m.getManager() + " writes").isEqualTo("status");
                    }
                });
    }

    @Test
    @Order(12)
    void aLeaderStoppedWithSigtermExitsAndHandsTheLeaseOver() throws Exception {
        String leader = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                .getSpec().getHolderIdentity();
        OperatorProcess standby = install.start("operator-4.log", SETTINGS);
        try {
            standby.awaitOutput("the leader is " + leader, WAIT);
            long start = System.nanoTime();
            // far above the lease (6 s): before the fix the process did not exit at all
            operator.terminate(Duration.ofSeconds(30));
            long exitedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(operator.log()).contains("released lease " + OPERATOR_NAMESPACE + "/oncestream-operator")
                    .doesNotContain("lost the leader-election lease");
            String holder = admin.leases().inNamespace(OPERATOR_NAMESPACE).withName("oncestream-operator").get()
                    .getSpec().getHolderIdentity();
            assertThat(holder).as("the lease after the leader stopped").isNotEqualTo(leader);
            standby.awaitOutput("Started event processing for controller: streamjob", WAIT);
            long ledMs = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("[operator] SIGTERM to exit %d ms, to the standby leading %d ms (lease 6 s, retry 1 s)%n",
                    exitedMs, ledMs);
            String ns = kube.createNamespace("op-handover");
            apply(ns, "after-handover", Map.of("parallelism: 2", "parallelism: 1"));
            awaitStatus(ns, "after-handover", s -> s.phase == Phase.Pending);
        } finally {
            operator.close();
            operator = standby;
        }
    }

    @Test
    @Order(13)
    void aConfiguredNamespaceListIsAllThatIsWatched() throws Exception {
        String watched = kube.createNamespace("op-watched");
        String other = kube.createNamespace("op-other");
        operator.close();
        Map<String, String> settings = new java.util.HashMap<>(SETTINGS);
        settings.put("quarkus.operator-sdk.controllers.streamjob.namespaces", watched);
        settings.put("oncestream.operator.leader-election.enabled", "false");
        operator = install.start("operator-3.log", settings);
        operator.awaitOutput("for namespace(s): [" + watched + "]", WAIT);
        operator.awaitOutput("'streamjob' controller started", WAIT);
        long mark = audit.mark();

        apply(other, "ignored", Map.of("parallelism: 2", "parallelism: 1"));
        apply(watched, "seen", Map.of("parallelism: 2", "parallelism: 1"));
        awaitStatus(watched, "seen", s -> s.phase == Phase.Pending);
        assertThat(job(other, "ignored").getStatus()).as("a job outside the watched namespaces is not reconciled").isNull();
        assertThat(audit.since(mark, r -> r.user().equals(OPERATOR_USER) && other.equals(r.namespace())))
                .as("no request at all in a namespace that is not watched").isEmpty();
    }

    /** docs/gitops.md's Argo CD health check on the status documents this class's tests saw, one per phase. */
    @Test
    @Order(14)
    void theArgoCdHealthCheckReadsWhatTheOperatorWrote() throws Exception {
        assertThat(SEEN.keySet()).as("phases seen by the tests above").containsExactlyInAnyOrder(Phase.values());
        Map<Phase, String> expected = Map.of(Phase.Pending, "Progressing", Phase.Running, "Healthy", Phase.Completed, "Healthy",
                Phase.Degraded, "Degraded", Phase.Failed, "Degraded", Phase.Suspended, "Suspended");
        ArgoHealthCheck check = ArgoHealthCheck.fromDocs();
        Path work = Files.createDirectories(install.workDir().resolve("argo"));
        for (Phase phase : Phase.values()) {
            var document = new com.fasterxml.jackson.databind.ObjectMapper().readTree(SEEN.get(phase));
            ArgoHealthCheck.Health health = check.evaluate(document, work);
            System.out.println("[operator] Argo CD health of a " + phase + " job: " + health);
            assertThat(health.status()).as(phase + " -> " + health).isEqualTo(expected.get(phase));
            assertThat(health.message()).as(phase + " message").isNotBlank().isNotEqualTo("nil");
        }
        var stale = (com.fasterxml.jackson.databind.node.ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(SEEN.get(Phase.Running));
        ((com.fasterxml.jackson.databind.node.ObjectNode) stale.get("metadata"))
                .put("generation", stale.at("/status/observedGeneration").asLong() + 1);
        assertThat(check.evaluate(stale, work).status()).as("a spec change not yet reconciled").isEqualTo("Progressing");
        var fresh = (com.fasterxml.jackson.databind.node.ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(SEEN.get(Phase.Running));
        fresh.remove("status");
        assertThat(check.evaluate(fresh, work).status()).as("no status yet").isEqualTo("Progressing");
    }

    // ---------------------------------------------------------------------------------------

    private void runHealthyWorkers(String ns, String job, int count) {
        Awaits.until(WAIT, count + " worker pods of " + job, () -> workerPods(ns, job).size() == count);
        for (int i = 0; i < count; i++) {
            String pod = job + "-" + i;
            workers.serve(pod, ProgressDocuments.healthy(i));
            workers.markRunning(admin, ns, pod, true);
        }
    }

    /**
     * The shared test manifest with two workers whose checkpoints go with the job, edited, applied
     * with kubectl. Its pods select a node label no node has: the scheduler leaves them unbound,
     * so the real node never runs them and the test alone plays their kubelet.
     */
    private static void apply(String ns, String name, Map<String, String> edits) {
        String yaml = TestManifests.streamJob(name, ns, Map.of()) + "  parallelism: 2\n  checkpoint: {whenDeleted: Delete}\n"
                + "  worker: {nodeSelector: {oncestream.io/test-node: none}}\n";
        kube.kubectl(TextEdits.apply(yaml, edits), "apply", "-f", "-").orThrow();
    }

    private static StreamJob job(String ns, String name) {
        return admin.resources(StreamJob.class).inNamespace(ns).withName(name).get();
    }

    private static StreamJobStatus awaitStatus(String ns, String name, Predicate<StreamJobStatus> until) {
        StreamJobStatus[] seen = new StreamJobStatus[1];
        try {
            Awaits.until(WAIT, "status of " + ns + "/" + name, () -> {
                StreamJob job = job(ns, name);
                seen[0] = job == null ? null : job.getStatus();
                boolean done = seen[0] != null && until.test(seen[0]);
                if (done && seen[0].phase != null) {
                    SEEN.put(seen[0].phase, io.fabric8.kubernetes.client.utils.Serialization.asJson(job));
                }
                return done;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last status: " + io.fabric8.kubernetes.client.utils.Serialization
                    .asYaml(seen[0]) + "\n" + operator.tail(), e);
        }
        return seen[0];
    }

    private static <T> T await(java.util.function.Supplier<T> get, String what) {
        Object[] found = new Object[1];
        Awaits.until(WAIT, what, () -> (found[0] = get.get()) != null);
        @SuppressWarnings("unchecked")
        T t = (T) found[0];
        return t;
    }


    private static List<AuditLog.Request> writes(long mark, String ns) {
        return audit.since(mark, r -> r.user().equals(OPERATOR_USER) && r.isWrite() && ns.equals(r.namespace()));
    }

    private static long count(List<AuditLog.Request> requests, String resource) {
        return requests.stream().filter(r -> resource.equals(r.resource())).count();
    }

    private static List<String> events(String ns, String job) {
        return admin.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> job.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getType() + " " + e.getReason() + " " + e.getMessage()).toList();
    }

    private static List<PersistentVolumeClaim> pvcs(String ns, String job) {
        return admin.persistentVolumeClaims().inNamespace(ns).withLabel(StreamJobResources.JOB_LABEL, job).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
    }

    private static Set<String> pvcUids(String ns, String job) {
        return pvcs(ns, job).stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    }

    private static List<Pod> workerPods(String ns, String job) {
        return admin.pods().inNamespace(ns).withLabel(StreamJobResources.JOB_LABEL, job).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
    }

    private static double metric(String text, String name) {
        return text.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric " + name + " in\n" + text));
    }
}
