package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.TestManifests;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.OperatorInstall;
import io.oncestream.testing.OperatorProcess;
import io.oncestream.testing.TextEdits;

/**
 * The packaged operator on the real API server and controller-manager, running as its own
 * ServiceAccount with the committed RBAC (deploy/operator/rbac.yaml). The API server's audit
 * log is the witness: it counts the operator's writes and any call its RBAC forbids fails the
 * test. Workers are HTTP servers replaying progress documents in the worker's format. Each
 * subclass gets an operator of its own (logs under {@code target/operator-it/<class>}); the
 * subclasses are split by behaviour. Every test makes the jobs it looks at in a namespace of its
 * own and runs in any order (CI runs JUnit's default order; a run with
 * {@code -Djunit.jupiter.testmethod.order.default=org.junit.jupiter.api.MethodOrderer$Random} shuffles them).
 */
@ExtendWith(KubeExtension.class)
abstract class OperatorITBase {

    static final String OPERATOR_NAMESPACE = OperatorInstall.NAMESPACE;
    static final String OPERATOR_USER = OperatorInstall.USER;
    static final Duration WAIT = Duration.ofSeconds(60);
    static final Map<String, String> SETTINGS = Map.of(
            "oncestream.operator.poll-interval", "1s",
            "oncestream.operator.poll-timeout", "1s",
            "oncestream.operator.leader-election.lease-duration", "6s",
            "oncestream.operator.leader-election.renew-deadline", "4s",
            "oncestream.operator.leader-election.retry-period", "1s");

    static KubeCluster kube;
    static KubernetesClient admin;
    static AuditLog audit;
    static long runMark;
    static OperatorInstall install;
    static OperatorProcess operator;

    final FakeWorkers workers = new FakeWorkers();

    @BeforeAll
    static void startOperator(KubeCluster cluster, TestInfo info) throws Exception {
        kube = cluster;
        admin = kube.admin();
        install = OperatorInstall.install(kube, "operator-it/" + info.getTestClass().orElseThrow().getSimpleName());
        audit = kube.auditLog();
        runMark = audit.mark();
        operator = install.startLeading("operator-1.log", SETTINGS, WAIT);
    }

    @AfterEach
    void noCallWasForbidden() {
        workers.close();
        // Only the RBAC's refusals: admission's 403s (a ResourceQuota, a namespace being deleted) are not about it.
        List<AuditLog.Request> forbidden = audit.since(runMark, r -> r.user().equals(OPERATOR_USER) && r.forbiddenByRbac());
        assertThat(forbidden).as("calls the operator's RBAC refused").isEmpty();
    }

    @AfterAll
    static void stopOperator() {
        if (operator != null) {
            operator.close();
        }
    }

    // ---------------------------------------------------------------------------------------

    void runHealthyWorkers(String ns, String job, int count) {
        Awaits.until(WAIT, count + " worker pods of " + job, () -> workerPods(ns, job).size() == count);
        for (int i = 0; i < count; i++) {
            String pod = job + "-" + i;
            workers.serve(pod, ProgressDocuments.healthy(ns + "/" + job, i));
            workers.markRunning(admin, ns, pod, true);
        }
    }

    /**
     * The shared test manifest with two workers whose checkpoints go with the job, edited, applied
     * with kubectl. Its pods select a node label no node has: the scheduler leaves them unbound,
     * so the real node never runs them and the test alone plays their kubelet.
     */
    static void apply(String ns, String name, Map<String, String> edits) {
        String yaml = TestManifests.streamJob(name, ns, Map.of()) + "  parallelism: 2\n  checkpoint: {whenDeleted: Delete}\n"
                + "  worker: {nodeSelector: {oncestream.io/test-node: none}}\n";
        kube.kubectl(TextEdits.apply(yaml, edits), "apply", "-f", "-").orThrow();
    }

    static StreamJob job(String ns, String name) {
        return admin.resources(StreamJob.class).inNamespace(ns).withName(name).get();
    }

    static StreamJobStatus awaitStatus(String ns, String name, Predicate<StreamJobStatus> until) {
        return awaitJob(ns, name, until).getStatus();
    }

    /** The StreamJob as it was when its status first met {@code until}. */
    static StreamJob awaitJob(String ns, String name, Predicate<StreamJobStatus> until) {
        StreamJob[] seen = new StreamJob[1];
        try {
            Awaits.until(WAIT, "status of " + ns + "/" + name, () -> {
                seen[0] = job(ns, name);
                return seen[0] != null && seen[0].getStatus() != null && until.test(seen[0].getStatus());
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last status: " + io.fabric8.kubernetes.client.utils.Serialization
                    .asYaml(seen[0] == null ? null : seen[0].getStatus()) + "\n" + operator.tail(), e);
        }
        return seen[0];
    }

    static <T> T await(java.util.function.Supplier<T> get, String what) {
        Object[] found = new Object[1];
        Awaits.until(WAIT, what, () -> (found[0] = get.get()) != null);
        @SuppressWarnings("unchecked")
        T t = (T) found[0];
        return t;
    }

    static List<AuditLog.Request> writes(long mark, String ns) {
        return audit.since(mark, r -> r.user().equals(OPERATOR_USER) && r.isWrite() && ns.equals(r.namespace()));
    }

    static long count(List<AuditLog.Request> requests, String resource) {
        return requests.stream().filter(r -> resource.equals(r.resource())).count();
    }

    static List<String> events(String ns, String job) {
        return admin.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> job.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getType() + " " + e.getReason() + " " + e.getMessage()).toList();
    }

    static List<PersistentVolumeClaim> pvcs(String ns, String job) {
        return admin.persistentVolumeClaims().inNamespace(ns).withLabel(StreamJobResources.JOB_LABEL, job).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
    }

    static Set<String> pvcUids(String ns, String job) {
        return pvcs(ns, job).stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    }

    static List<Pod> workerPods(String ns, String job) {
        return admin.pods().inNamespace(ns).withLabel(StreamJobResources.JOB_LABEL, job).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
    }

    static double metric(String text, String name) {
        return text.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric " + name + " in\n" + text));
    }
}
