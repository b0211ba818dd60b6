package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.api.TestManifests;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.Command;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.NodeExtension;
import io.oncestream.testing.OperatorRelease;

/**
 * The operator installed as users install it, running as a pod on the real node with the
 * image built from src/main/docker/Dockerfile and in-cluster configuration (its projected
 * ServiceAccount token, the API server reached through the {@code kubernetes} Service; no
 * kubeconfig): with {@code helm install} (then upgraded and uninstalled), with
 * {@code kubectl apply -f deploy/operator/operator.yaml}, and limited to one namespace.
 */
@ExtendWith({KubeExtension.class, KafkaExtension.class, CassandraExtension.class, NodeExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InstallE2E {

    private static final String CHART = LocalService.repoDir().resolve("helm/oncestream").toString();
    private static final String EXAMPLE = LocalService.repoDir().resolve(E2EJob.EXAMPLE).toString();
    private static final Duration WAIT = E2ESettings.WAIT;

    private static KubeCluster kube;
    private static KafkaBroker kafka;
    private static CassandraNode cassandra;
    private static AuditLog audit;

    @BeforeAll
    static void stack(KubeCluster cluster, KafkaBroker broker, CassandraNode node) {
        kube = cluster;
        kafka = broker;
        cassandra = node;
        audit = kube.auditLog();
        kube.kubectl(null, "apply", "-f", LocalService.repoDir().resolve("crds").toString()).orThrow();
    }

    @AfterAll
    static void deleteJobs() {
        E2EJob.deleteAll(kube);
    }

    @Test
    @Order(1)
    void helmInstallRunsTheExampleAnUpgradeRollsOnlyTheOperatorAndUninstallLeavesTheJob() throws Exception {
        String ns = kube.createNamespace("e2e-helm-system");
        String user = "system:serviceaccount:" + ns + ":e2e-operator";
        helm("install", "e2e", CHART, "-n", ns, "--wait", "--timeout", "180s", "--set", "operator.pollInterval=2s");
        OperatorRelease.awaitWebhook(kube, "default", WAIT);
        try {
            Pod operator = operatorPod(ns, "e2e-operator");
            assertThat(operator.getSpec().getServiceAccountName()).isEqualTo("e2e-operator");
            assertThat(operator.getSpec().getContainers().get(0).getEnv()).noneMatch(e -> e.getName().equals("KUBECONFIG"));
            assertThat(operator.getStatus().getContainerStatuses().get(0).getReady()).isTrue();

            E2EJob job = E2EJob.example(kube, kafka, cassandra, 6, 2000);
            job.produce(3000);
            kube.kubectl(null, "apply", "-n", job.namespace, "-f", EXAMPLE).orThrow();
            job.awaitExactTable(WAIT);
            job.awaitStatus("Running with lag 0", WAIT, s -> s.phase == Phase.Running && s.lag != null && s.lag == 0);
            assertThat(audit.since(0, r -> r.user().equals(user) && r.code() == 403)).as("calls the chart's RBAC refused").isEmpty();

            // helm upgrade with a changed setting: a new operator pod; the job's objects and pods untouched.
            Map<String, String> workers = workerPods(job);
            String statefulSetVersion = statefulSetVersion(job);
            long mark = audit.mark();
            helm("upgrade", "e2e", CHART, "-n", ns, "--reuse-values", "--set", "operator.pollInterval=3s", "--wait", "--timeout", "180s");
            Awaits.until(WAIT, "the old operator pod to be gone", () -> kube.admin().pods().inNamespace(ns).list().getItems().stream()
                    .noneMatch(p -> p.getMetadata().getName().equals(operator.getMetadata().getName())));
            OperatorRelease.awaitWebhook(kube, "default", WAIT);
            Pod upgraded = operatorPod(ns, "e2e-operator");
            assertThat(upgraded.getMetadata().getName()).isNotEqualTo(operator.getMetadata().getName());
            long batchBefore = job.status().batchId;
            job.produce(1000);
            job.awaitExactTable(WAIT);
            job.awaitStatus("the new operator reporting later batches", WAIT, s -> s.batchId != null && s.batchId > batchBefore && s.lag != null && s.lag == 0);
            assertThat(workerPods(job)).as("worker pods (name -> uid, restarts) after the upgrade").isEqualTo(workers);
            assertThat(statefulSetVersion(job)).as("the StatefulSet is not rewritten by the upgrade").isEqualTo(statefulSetVersion);
            assertThat(audit.since(mark, r -> r.user().equals(user) && r.isWrite()))
                    .as("the upgraded operator's writes: status patches only")
                    .isNotEmpty()
                    .allMatch(r -> r.resource().equals("streamjobs") && "status".equals(r.subresource()));

            // helm uninstall: the operator goes, the job, its workers and its checkpoints stay and keep working.
            helm("uninstall", "e2e", "-n", ns, "--wait", "--timeout", "120s");
            Awaits.until(WAIT, "the operator pods to be gone", () -> kube.admin().pods().inNamespace(ns).list().getItems().isEmpty());
            assertThat(kube.admin().apps().deployments().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(kube.admin().rbac().clusterRoles().withName("e2e-operator").get()).isNull();
            assertThat(job.job()).as("the StreamJob after helm uninstall").isNotNull();
            assertThat(kube.admin().apiextensions().v1().customResourceDefinitions().withName("streamjobs.oncestream.io").get()).isNotNull();
            assertThat(workerPods(job)).as("worker pods after helm uninstall").isEqualTo(workers);
            assertThat(kube.admin().persistentVolumeClaims().inNamespace(job.namespace).list().getItems()).hasSize(2);
            job.produce(500);
            job.awaitExactTable(WAIT);
            System.out.printf("[e2e] helm: %d records exact through install, upgrade and uninstall%n", job.produced());
            E2EJob.deleteAll(kube);
        } finally {
            kube.helm("uninstall", "e2e", "-n", ns, "--wait", "--timeout", "120s"); // no-op when the test got that far
            Awaits.until(WAIT, "the operator pods to be gone", () -> kube.admin().pods().inNamespace(ns).list().getItems().isEmpty());
        }
    }

    @Test
    @Order(2)
    void thePlainManifestsInstallTheSameOperator() throws Exception {
        String manifests = LocalService.repoDir().resolve("deploy/operator/operator.yaml").toString();
        kube.kubectl(null, "apply", "-f", manifests).orThrow();
        try {
            kube.kubectl(null, "rollout", "status", "-n", "oncestream-system", "deployment/oncestream-operator", "--timeout=180s").orThrow();
            Pod operator = operatorPod("oncestream-system", "oncestream-operator");
            assertThat(operator.getSpec().getServiceAccountName()).isEqualTo("oncestream-operator");

            E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-plain", 3, 1000);
            job.produce(2000);
            job.apply(Map.of());
            job.awaitExactTable(WAIT);
            job.awaitStatus("Running with lag 0", WAIT, s -> s.phase == Phase.Running && s.lag != null && s.lag == 0);
            var wait = kube.kubectl(null, "wait", "-n", job.namespace, "--for=condition=Ready", "--timeout=60s", "sj/" + job.name);
            assertThat(wait.exitCode()).as("kubectl wait: " + wait.stderr()).isZero();
            E2EJob.deleteAll(kube);
        } finally {
            // The operator goes; the CRD (and every StreamJob with it) stays.
            kube.kubectl(null, "delete", "-n", "oncestream-system", "deployment/oncestream-operator", "configmap/oncestream-operator",
                    "service/oncestream-operator-metrics", "service/oncestream-operator-webhook", "--wait=true").orThrow();
            // The webhook's registration is cluster-wide: left behind, it would refuse every later apply (failurePolicy Fail).
            kube.kubectl(null, "delete", "validatingwebhookconfiguration/oncestream-operator-oncestream-system", "--wait=true").orThrow();
            Awaits.until(WAIT, "the operator pod to be gone", () -> kube.admin().pods().inNamespace("oncestream-system")
                    .withLabel("app.kubernetes.io/component", "operator").list().getItems().isEmpty());
        }
    }

    @Test
    @Order(3)
    void anOperatorLimitedToOneNamespaceWorksThereAndNowhereElse() {
        String ns = kube.createNamespace("e2e-scoped-system");
        String watched = kube.createNamespace("e2e-watched");
        String other = kube.createNamespace("e2e-unwatched");
        String user = "system:serviceaccount:" + ns + ":scoped-operator";
        long mark = audit.mark();
        helm("install", "scoped", CHART, "-n", ns, "--set", "watchNamespaces={" + watched + "}", "--wait", "--timeout", "180s");
        try {
            OperatorRelease.awaitWebhook(kube, watched, WAIT);
            assertThat(kube.admin().rbac().clusterRoles().withName("scoped-operator").get()).as("no cluster-wide rights").isNull();
            // Workers kept off the node: this test is about what the operator may see and do.
            String job = TestManifests.streamJob("scoped", "NS", Map.of()) + "  worker: {nodeSelector: {oncestream.io/test-node: none}}\n";
            kube.kubectl(job.replace("namespace: NS", "namespace: " + other), "apply", "-f", "-").orThrow();
            kube.kubectl(job.replace("namespace: NS", "namespace: " + watched), "apply", "-f", "-").orThrow();
            Awaits.until(WAIT, "the job in the watched namespace to be reconciled", () -> {
                StreamJob sj = kube.admin().resources(StreamJob.class).inNamespace(watched).withName("scoped").get();
                return sj.getStatus() != null && sj.getStatus().observedGeneration != null;
            });
            assertThat(kube.admin().apps().statefulSets().inNamespace(watched).withName(StreamJobResources.statefulSetName("scoped")).get())
                    .isNotNull();
            assertThat(kube.admin().resources(StreamJob.class).inNamespace(other).withName("scoped").get().getStatus())
                    .as("a job outside the watched namespace").isNull();
            assertThat(kube.admin().apps().statefulSets().inNamespace(other).list().getItems()).isEmpty();

            Command.Result canI = kube.kubectl(null, "auth", "can-i", "list", "streamjobs.oncestream.io", "-n", other, "--as", user);
            assertThat(canI.stdout().trim()).as("may the operator list StreamJobs elsewhere").isEqualTo("no");
            List<AuditLog.Request> requests = audit.since(mark, r -> r.user().equals(user));
            assertThat(requests).as("the operator's requests").isNotEmpty();
            assertThat(requests).as("requests outside its namespaces, or refused")
                    .noneMatch(r -> other.equals(r.namespace()) || r.code() == 403);
            assertThat(requests).as("requests for StreamJobs across all namespaces")
                    .noneMatch(r -> r.resource().equals("streamjobs") && r.namespace() == null);
            Map<String, Long> byNamespace = new TreeMap<>();
            requests.forEach(r -> byNamespace.merge(String.valueOf(r.namespace()), 1L, Long::sum));
            System.out.println("[e2e] scoped operator requests by namespace: " + byNamespace);
        } finally {
            helm("uninstall", "scoped", "-n", ns, "--wait", "--timeout", "120s");
            kube.admin().namespaces().withName(watched).delete();
            kube.admin().namespaces().withName(other).delete();
        }
    }

    // -----------------------------------------------------------------------------------

    private static void helm(String... args) {
        Command.Result result = kube.helm(args);
        assertThat(result.exitCode()).as("helm " + String.join(" ", args) + "\n" + result.stdout() + result.stderr()).isZero();
    }

    /** The one running operator pod of the Deployment {@code name}. */
    private static Pod operatorPod(String ns, String name) {
        Deployment deployment = kube.admin().apps().deployments().inNamespace(ns).withName(name).get();
        assertThat(deployment).as("Deployment " + ns + "/" + name).isNotNull();
        List<Pod> pods = kube.admin().pods().inNamespace(ns).withLabels(deployment.getSpec().getSelector().getMatchLabels())
                .list().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
        assertThat(pods).as("operator pods of " + name).hasSize(1);
        assertThat(pods.get(0).getSpec().getNodeName()).as("runs on the node").isEqualTo("oncestream-node");
        return pods.get(0);
    }

    /** Worker pods: name -> "uid restarts". */
    private static Map<String, String> workerPods(E2EJob job) {
        Map<String, String> out = new TreeMap<>();
        for (Pod p : job.pods()) {
            int restarts = p.getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
            out.put(p.getMetadata().getName(), p.getMetadata().getUid() + " " + restarts);
        }
        assertThat(out).isNotEmpty();
        return out;
    }

    private static String statefulSetVersion(E2EJob job) {
        return kube.admin().apps().statefulSets().inNamespace(job.namespace).withName(StreamJobResources.statefulSetName(job.name))
                .get().getMetadata().getResourceVersion();
    }
}
