package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.TestManifests;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.model.WorkerConfigMaps;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;

/**
 * What a StreamJob becomes: its owned objects applied once and never written again while
 * unchanged, rolled on a spec change, kept (or not) with its checkpoints, a change the
 * checkpoints cannot follow refused, and a GitOps tool's server-side apply without drift.
 */
class OperatorSpecIT extends OperatorITBase {
    @Test
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
    void retainedCheckpointsOutliveTheirJob() {
        String ns = kube.createNamespace("op-retain");
        apply(ns, "kept", Map.of("parallelism: 2", "parallelism: 1", "whenDeleted: Delete", "whenDeleted: Retain"));
        Awaits.until(WAIT, "checkpoint PVC", () -> pvcs(ns, "kept").size() == 1);
        admin.resources(StreamJob.class).inNamespace(ns).withName("kept").delete();
        Awaits.until(WAIT, "StatefulSet collected", () -> admin.apps().statefulSets().inNamespace(ns).withName("kept").get() == null);
        assertThat(pvcs(ns, "kept")).as("whenDeleted: Retain keeps the checkpoint").hasSize(1);
    }

    @Test
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
    void changingTopicsOrTableUnderCheckpointsIsRefusedWithAParallelismChangeInTheSameEdit() {
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

    /**
     * Health and metrics, on a job of this test's own: its reconciles, its workers' answered
     * polls and a change its checkpoints cannot follow are counted, and it has series of its own.
     */
    @Test
    void metricsAndHealthProbes() throws Exception {
        String ns = kube.createNamespace("op-metrics");
        apply(ns, "counted", Map.of());
        runHealthyWorkers(ns, "counted", 2);
        awaitStatus(ns, "counted", s -> s.phase == Phase.Running);
        Awaits.until(WAIT, "two checkpoint PVCs", () -> pvcs(ns, "counted").size() == 2);
        apply(ns, "counted", Map.of("topics: [orders]", "topics: [orders, refunds]"));
        awaitStatus(ns, "counted", s -> "ChangeRefused".equals(s.condition(ConditionType.ConfigValid).orElseThrow().reason));

        var ready = operator.get("/q/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("\"streamjob\": \"OK\"");
        assertThat(operator.get("/q/health/live").statusCode()).isEqualTo(200);
        String metrics = operator.get("/q/metrics").body();
        assertThat(metric(metrics, "oncestream_operator_reconciliations_total")).isPositive();
        assertThat(metric(metrics, "oncestream_operator_progress_polls_total{result=\"answered\"}")).isPositive();
        assertThat(metric(metrics, "oncestream_operator_refused_changes_total")).isPositive();
        assertThat(metrics).contains("oncestream_operator_streamjobs{phase=\"Pending\"}");
        int jobs = admin.resources(StreamJob.class).inAnyNamespace().list().getItems().size();
        assertThat(metric(metrics, "oncestream_operator_streamjobs_reconciled")).as("every existing job was reconciled")
                .isGreaterThanOrEqualTo(jobs).isPositive();
        assertThat(metric(metrics, "oncestream_operator_polled_streamjobs")).isBetween(0.0,
                metric(metrics, "oncestream_operator_streamjobs_reconciled"));
        assertThat(metric(metrics, "oncestream_operator_reconcile_duration_seconds_count")).isPositive();
        assertThat(metrics).as("a job's own series").contains("oncestream_job_phase{job_id=\"");
        io.oncestream.testing.MetricsDoc.check("operator", metrics);
    }

    /**
     * As a GitOps tool syncs: server-side apply under its own field manager, the operator
     * reconciles and reports, the same manifest applied again: no conflict, no drift, and no
     * field of the spec owned by anyone but the tool.
     */
    /**
     * The owned objects are matched by their applied digest plus the fields a person is likely to
     * edit (docs/operator.md): {@code kubectl scale} of the StatefulSet and an edit of the
     * ConfigMap's data are undone, on the real API server.
     */
    @Test
    void aHandScaledStatefulSetAndAnEditedConfigMapAreRestored() {
        String ns = kube.createNamespace("op-edited");
        apply(ns, "edited", Map.of());
        StatefulSet sts = await(() -> admin.apps().statefulSets().inNamespace(ns).withName("edited").get(), "StatefulSet");
        assertThat(sts.getMetadata().getAnnotations()).containsKey(StreamJobResources.APPLIED_HASH_ANNOTATION);
        ConfigMap cm = await(() -> admin.configMaps().inNamespace(ns).withName("edited-config").get(), "ConfigMap");
        String config = cm.getData().get(StreamJobResources.CONFIG_KEY);

        kube.kubectl(null, "scale", "statefulset/edited", "-n", ns, "--replicas=0").orThrow();
        Awaits.until(WAIT, "the StatefulSet scaled back to 2", () ->
                admin.apps().statefulSets().inNamespace(ns).withName("edited").get().getSpec().getReplicas() == 2);

        admin.configMaps().inNamespace(ns).withName("edited-config")
                .edit(c -> new ConfigMapBuilder(c).addToData(StreamJobResources.CONFIG_KEY, "{}").build());
        Awaits.until(WAIT, "the ConfigMap's data restored", () -> config.equals(
                admin.configMaps().inNamespace(ns).withName("edited-config").get().getData().get(StreamJobResources.CONFIG_KEY)));
    }

    @Test
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
}
