package io.oncestream.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.TestManifests;

/**
 * The operator installed with the Helm chart (helm/oncestream) in a namespace of its own, as
 * a pod on the local node running this build's image with in-cluster configuration: every call
 * it makes is allowed or refused by the chart's RBAC.
 */
public final class OperatorRelease {

    private static final String CHART = LocalService.repoDir().resolve("helm/oncestream").toString();

    private final KubeCluster kube;
    private final LocalNode node;
    private final String namespace;
    private final String release;

    private OperatorRelease(KubeCluster kube, LocalNode node, String namespace, String release) {
        this.kube = kube;
        this.node = node;
        this.namespace = namespace;
        this.release = release;
    }

    /**
     * {@code helm install RELEASE helm/oncestream} into a new namespace named after
     * {@code release}, with {@code values} ({@code --set}); returns when the operator is ready.
     */
    public static OperatorRelease install(KubeCluster kube, LocalNode node, String release, Map<String, String> values,
            Duration timeout) {
        kube.kubectl(null, "apply", "-f", LocalService.repoDir().resolve("crds").toString()).orThrow();
        String namespace = kube.createNamespace(release + "-system");
        List<String> args = new ArrayList<>(List.of("install", release, CHART, "-n", namespace, "--wait", "--timeout",
                timeout.toSeconds() + "s"));
        values.forEach((k, v) -> {
            args.add("--set");
            args.add(k + "=" + v);
        });
        kube.helm(args.toArray(String[]::new)).orThrow();
        OperatorRelease operator = new OperatorRelease(kube, node, namespace, release);
        operator.awaitReady(timeout);
        awaitWebhook(kube, "default", timeout);
        return operator;
    }

    /**
     * Waits until the admission webhook answers for {@code namespace}: a server-side dry-run of a
     * valid StreamJob there is accepted. After {@code helm install --wait} (or an upgrade) the
     * operator pod is ready, but the node's kube-proxy may not route the webhook's Service to it
     * yet, and the API server's call is refused ("failed calling webhook ... connection refused").
     * Without a webhook for that namespace the dry-run is accepted at once.
     */
    public static void awaitWebhook(KubeCluster kube, String namespace, Duration timeout) {
        String job = TestManifests.streamJob("webhook-probe", namespace, Map.of());
        Awaits.until(timeout, "the admission webhook to answer for namespace " + namespace, () -> {
            Command.Result dryRun = kube.kubectl(job, "apply", "--dry-run=server", "-f", "-");
            if (dryRun.exitCode() != 0 && !dryRun.stderr().contains("failed calling webhook")) {
                throw new AssertionError("a valid StreamJob refused: " + dryRun.stderr());
            }
            return dryRun.exitCode() == 0;
        });
    }

    /**
     * {@code helm upgrade --reuse-values} with {@code values} ({@code --set}); returns when the
     * new operator pod is the only one and ready.
     */
    public void upgrade(Map<String, String> values, Duration timeout) {
        List<String> args = new ArrayList<>(List.of("upgrade", release, CHART, "-n", namespace, "--reuse-values", "--wait",
                "--timeout", timeout.toSeconds() + "s"));
        values.forEach((k, v) -> {
            args.add("--set");
            args.add(k + "=" + v);
        });
        kube.helm(args.toArray(String[]::new)).orThrow();
        Awaits.until(timeout, "one operator pod in " + namespace + " after the upgrade",
                () -> kube.admin().pods().inNamespace(namespace).withLabel("app.kubernetes.io/component", "operator").list()
                        .getItems().size() == 1);
        awaitReady(timeout);
        awaitWebhook(kube, "default", timeout);
    }

    /** The log of the container before the last restart ({@code kubectl logs --previous}). */
    public String previousLog() {
        return kube.kubectl(null, "logs", "--previous", "-n", namespace, pod().getMetadata().getName()).stdout();
    }

    public String namespace() {
        return namespace;
    }

    /** The user the operator's requests carry in the audit log. */
    public String user() {
        return "system:serviceaccount:" + namespace + ":" + release + "-operator";
    }

    /** The operator's (one) pod. */
    public Pod pod() {
        List<Pod> pods = kube.admin().pods().inNamespace(namespace).withLabel("app.kubernetes.io/component", "operator")
                .list().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
        if (pods.size() != 1) {
            throw new AssertionError("expected one operator pod in " + namespace + ", found " + pods.size());
        }
        return pods.get(0);
    }

    public int restarts() {
        return pod().getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
    }

    /** Waits until the operator container runs and is ready. */
    public void awaitReady(Duration timeout) {
        Awaits.until(timeout, "the operator pod in " + namespace + " to be ready", () -> {
            Pod pod = pod();
            return pod.getStatus().getContainerStatuses() != null && pod.getStatus().getContainerStatuses().stream()
                    .allMatch(c -> Boolean.TRUE.equals(c.getReady()));
        });
    }

    /** SIGKILL to the operator's JVM, as a crash would; the kubelet restarts the container. */
    public void kill9() {
        long pid = node.jvmPid(pod(), "operator").orElseThrow(() -> new AssertionError("no operator JVM runs in " + namespace));
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        Awaits.until(Duration.ofSeconds(30), "the operator JVM " + pid + " to be gone",
                () -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
    }

    /** The current container's log. */
    public String log() {
        return kube.kubectl(null, "logs", "-n", namespace, pod().getMetadata().getName()).stdout();
    }

    /** {@code helm uninstall}, then waits until the operator pod is gone. */
    public void uninstall(Duration timeout) {
        kube.helm("uninstall", release, "-n", namespace, "--wait", "--timeout", timeout.toSeconds() + "s");
        Awaits.until(timeout, "the operator pods in " + namespace + " to be gone",
                () -> kube.admin().pods().inNamespace(namespace).list().getItems().isEmpty());
        kube.admin().namespaces().withName(namespace).delete();
    }
}
