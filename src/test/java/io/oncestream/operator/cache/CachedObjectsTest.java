package io.oncestream.operator.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.TestJobs;
import io.oncestream.operator.model.WorkerConfigMaps;
import io.oncestream.operator.model.WorkerJobConfigs;
import io.oncestream.operator.model.WorkerServices;
import io.oncestream.operator.model.WorkerSettings;
import io.oncestream.operator.model.WorkerStatefulSets;
import io.oncestream.operator.progress.WorkerPods;

/**
 * What the informers keep of each object (CachedObjects) is enough for every decision the
 * reconciler makes, and an owned object is applied again exactly when it should be
 * (AppliedObjects): the job or the operator changed it, or a kept field was edited by hand.
 */
class CachedObjectsTest {

    private static final WorkerSettings SETTINGS = new WorkerSettings("oncestream/oncestream:0.1.0", "IfNotPresent", 30);

    /** A worker pod as the API server sends it: spec, managed fields, several conditions. */
    private static Pod pod(String phase, String ip, String ready, boolean deleting) {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: paid-orders-0
                  namespace: shop
                  uid: 77
                  resourceVersion: "4242"
                  labels: {app.kubernetes.io/managed-by: oncestream-operator, oncestream.io/job: paid-orders}
                  annotations: {oncestream.io/config-hash: abc}
                  DELETING
                  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: paid-orders, uid: 5, controller: true}]
                  managedFields:
                  - manager: kube-controller-manager
                    operation: Update
                    apiVersion: v1
                    fieldsType: FieldsV1
                    fieldsV1: {"f:metadata": {"f:labels": {".": {}, "f:oncestream.io/job": {}}}, "f:spec": {"f:containers": {}}}
                spec:
                  containers:
                  - name: worker
                    image: oncestream/oncestream:0.1.0
                    args: [worker, --config, /etc/oncestream/job.json]
                    env: [{name: CASSANDRA_PASSWORD, valueFrom: {secretKeyRef: {name: cassandra, key: password}}}]
                    readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 5}
                status:
                  phase: PHASE
                  podIP: IP
                  conditions:
                  - {type: PodScheduled, status: "True"}
                  - {type: Initialized, status: "True"}
                  - {type: Ready, status: "READY"}
                  - {type: ContainersReady, status: "READY"}
                  containerStatuses:
                  - {name: worker, ready: true, restartCount: 2, image: oncestream/oncestream:0.1.0, imageID: sha256:00}
                """.replace("PHASE", phase).replace("IP", ip).replace("READY", ready)
                .replace("DELETING", deleting ? "deletionTimestamp: \"2026-12-04T06:00:00Z\"" : "");
        return Serialization.unmarshal(yaml, Pod.class);
    }

    @Test
    void aCachedPodDecidesPollingExactlyAsTheWholePod() {
        for (Pod whole : List.of(pod("Running", "198.18.1.7", "True", false), pod("Running", "198.18.1.7", "False", false),
                pod("Pending", "\"\"", "False", false), pod("Running", "fd00::7", "True", false),
                pod("Running", "198.18.1.7", "True", true))) {
            Pod kept = CachedObjects.pod(Serialization.clone(whole));
            assertThat(WorkerPods.expected("paid-orders", 1, List.of(kept)))
                    .as("polling decided from the cached form of\n" + Serialization.asYaml(whole))
                    .isEqualTo(WorkerPods.expected("paid-orders", 1, List.of(whole)).stream()
                            .map(e -> new WorkerPods.Expected(e.podName(), e.ordinal(), kept, e.ready(), e.pollAddress())).toList());
            assertThat(kept.getSpec()).isNull();
            assertThat(kept.getMetadata().getManagedFields()).isEmpty();
            assertThat(kept.getMetadata().getLabels()).containsEntry(StreamJobResources.JOB_LABEL, "paid-orders");
            assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("4242");
            assertThat(kept.getStatus().getConditions()).extracting(c -> c.getType()).containsExactly("Ready");
            assertThat(Serialization.asJson(kept).length()).as("bytes kept of " + Serialization.asJson(whole).length())
                    .isLessThan(Serialization.asJson(whole).length() / 3);
        }
    }

    /** Why a worker's container does not run survives the cache, and of a running one only its name and restart count. */
    @Test
    void aCachedPodTellsWhyItsContainerWaitsAsTheWholePod() {
        Pod running = pod("Running", "198.18.1.7", "True", false);
        assertThat(WorkerPods.containerProblem(running)).isNull();
        Pod keptRunning = CachedObjects.pod(Serialization.clone(running));
        assertThat(WorkerPods.containerProblem(keptRunning)).isNull();
        assertThat(keptRunning.getStatus().getContainerStatuses()).singleElement()
                .satisfies(c -> assertThat(Serialization.asJson(c)).isEqualTo("{\"name\":\"worker\",\"restartCount\":2}"));

        String log = "x".repeat(3000) + "\nUnrecognized VM option 'NoSuchOption'\nError: Could not create the Java Virtual Machine.\n";
        // waiting reason, its message, what the status says before the end of the last exit's message ("" for nothing)
        List<String[]> problems = List.of(
                new String[] {"CrashLoopBackOff", "back-off 10s restarting failed container", "container worker: CrashLoopBackOff; last exit code 1: "},
                new String[] {"ImagePullBackOff", "Back-off pulling image \"my/worker:9\"",
                    "container worker: ImagePullBackOff (Back-off pulling image \"my/worker:9\"); last exit code 1: "},
                new String[] {"ContainerCreating", null, ""});
        for (String[] problem : problems) {
            String state = problem[0];
            String expected = problem[2];
            Pod whole = pod("Running", "198.18.1.7", "False", false);
            ContainerStatus c = whole.getStatus().getContainerStatuses().get(0);
            c.setState(new io.fabric8.kubernetes.api.model.ContainerStateBuilder().withNewWaiting().withReason(state)
                    .withMessage(problem[1]).endWaiting().build());
            c.setLastState(new io.fabric8.kubernetes.api.model.ContainerStateBuilder().withNewTerminated().withExitCode(1)
                    .withReason("Error").withMessage(log).endTerminated().build());
            Pod kept = CachedObjects.pod(Serialization.clone(whole));
            if (expected.isEmpty()) {
                assertThat(WorkerPods.containerProblem(whole)).as(state).isNull();
                assertThat(WorkerPods.containerProblem(kept)).as(state).isNull();
                continue;
            }
            assertThat(WorkerPods.containerProblem(whole)).as(state).startsWith(expected)
                    .endsWith("Unrecognized VM option 'NoSuchOption' / Error: Could not create the Java Virtual Machine.");
            assertThat(WorkerPods.containerProblem(kept)).as(state).startsWith(expected + "...xxx")
                    .endsWith("Unrecognized VM option 'NoSuchOption' / Error: Could not create the Java Virtual Machine.");
            assertThat(kept.getStatus().getContainerStatuses().get(0).getLastState().getTerminated().getMessage())
                    .as("the end of the message only").hasSize(CachedObjects.TERMINATION_MESSAGE + 3);
        }
    }

    @Test
    void aCachedStreamJobLosesOnlyManagedFieldsAndTheLastAppliedAnnotation() {
        StreamJob job = TestJobs.job("");
        job.getMetadata().setAnnotations(Map.of(CachedObjects.LAST_APPLIED, Serialization.asJson(job), "team", "payments"));
        job.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder().withManager("kubectl").build()));
        String spec = Serialization.asJson(job.getSpec());
        StreamJob kept = CachedObjects.streamJob(job);
        assertThat(kept.getMetadata().getAnnotations()).containsExactly(Map.entry("team", "payments"));
        assertThat(kept.getMetadata().getManagedFields()).isNullOrEmpty();
        assertThat(Serialization.asJson(kept.getSpec())).isEqualTo(spec);
        assertThat(kept.getMetadata().getGeneration()).isEqualTo(3);
        assertThat(WorkerJobConfigs.from(kept)).isEqualTo(WorkerJobConfigs.from(TestJobs.job("")));
    }

    /** The StatefulSet as the API server would return it after the operator applied {@code applied}. */
    private static StatefulSet asStored(StatefulSet applied) {
        StatefulSet stored = Serialization.clone(applied);
        stored.getMetadata().setResourceVersion("99");
        stored.getMetadata().setGeneration(4L);
        stored.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder().withManager("streamjob")
                .withOperation("Apply").build()));
        stored.getSpec().setRevisionHistoryLimit(10); // a server default
        stored.setStatus(new StatefulSetStatusBuilder().withReplicas(2).withReadyReplicas(1).build());
        return stored;
    }

    private static StatefulSet desiredStatefulSet(StreamJob job) {
        JobConfig config = WorkerJobConfigs.from(job);
        return AppliedObjects.stamped(WorkerStatefulSets.desired(job, SETTINGS, WorkerConfigMaps.hash(config), false));
    }

    private static boolean matches(StatefulSet actual, StatefulSet desired) {
        return AppliedObjects.match(actual, desired,
                java.util.Objects.equals(actual.getSpec().getReplicas(), desired.getSpec().getReplicas())).matched();
    }

    @Test
    void anOwnedStatefulSetIsAppliedAgainWhenTheJobChangesOrItsReplicasWereEditedNeverOtherwise() {
        StreamJob job = TestJobs.job("  parallelism: 2\n");
        StatefulSet cached = CachedObjects.statefulSet(asStored(desiredStatefulSet(job)));
        assertThat(cached.getSpec().getTemplate()).isNull();
        assertThat(cached.getStatus()).isNull();
        assertThat(cached.getMetadata().getManagedFields()).isEmpty();
        assertThat(cached.getMetadata().getOwnerReferences()).hasSize(1);

        assertThat(matches(cached, desiredStatefulSet(TestJobs.job("  parallelism: 2\n"))))
                .as("the same job, desired again: nothing to apply").isTrue();
        assertThat(matches(cached, desiredStatefulSet(TestJobs.job("  parallelism: 3\n"))))
                .as("parallelism changed").isFalse();
        assertThat(matches(cached, desiredStatefulSet(TestJobs.job("  parallelism: 2\n  worker: {image: other:1}\n"))))
                .as("image changed").isFalse();
        StatefulSet scaledByHand = Serialization.clone(cached);
        scaledByHand.getSpec().setReplicas(0);
        assertThat(matches(scaledByHand, desiredStatefulSet(job))).as("kubectl scale --replicas=0, undone").isFalse();
        StatefulSet fromAnOlderOperator = Serialization.clone(cached);
        fromAnOlderOperator.getMetadata().getAnnotations().remove(StreamJobResources.APPLIED_HASH_ANNOTATION);
        assertThat(matches(fromAnOlderOperator, desiredStatefulSet(job))).as("no digest: applied once more").isFalse();
    }

    @Test
    void anOwnedConfigMapIsAppliedAgainWhenItsDataWasEditedAndAServiceWhenItChanged() {
        StreamJob job = TestJobs.job("");
        ConfigMap desired = AppliedObjects.stamped(WorkerConfigMaps.desired(job, WorkerJobConfigs.from(job)));
        ConfigMap stored = Serialization.clone(desired);
        stored.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder().withManager("streamjob").build()));
        ConfigMap cached = CachedObjects.configMap(stored);
        ConfigMap again = AppliedObjects.stamped(WorkerConfigMaps.desired(job, WorkerJobConfigs.from(job)));
        assertThat(AppliedObjects.match(cached, again, cached.getData().equals(again.getData())).matched()).isTrue();
        ConfigMap edited = Serialization.clone(cached);
        edited.getData().put(StreamJobResources.CONFIG_KEY, "{}");
        assertThat(AppliedObjects.match(edited, again, edited.getData().equals(again.getData())).matched())
                .as("data edited by hand, undone").isFalse();

        Service service = CachedObjects.service(AppliedObjects.stamped(WorkerServices.desired(job)));
        assertThat(service.getSpec()).isNull();
        assertThat(AppliedObjects.match(service, AppliedObjects.stamped(WorkerServices.desired(job)), true).matched()).isTrue();
        StreamJob other = TestJobs.job("");
        other.getMetadata().setUid("another-uid"); // the job deleted and created again under its name
        assertThat(AppliedObjects.match(service, AppliedObjects.stamped(WorkerServices.desired(other)), true).matched()).isFalse();
    }
}
