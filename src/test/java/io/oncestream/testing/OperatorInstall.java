package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;

/**
 * The operator installed as a user would before [packaging]'s chart: the committed CRD and
 * RBAC applied with kubectl, and the packaged operator run as a process with a kubeconfig of
 * its own ServiceAccount ({@code oncestream-system/oncestream-operator}), so that every call
 * it makes is allowed or refused by exactly that RBAC.
 */
public final class OperatorInstall {

    public static final String NAMESPACE = "oncestream-system";
    public static final String USER = "system:serviceaccount:" + NAMESPACE + ":oncestream-operator";

    private final KubeCluster kube;
    private final Path workDir;
    private final Path kubeconfig;

    private OperatorInstall(KubeCluster kube, Path workDir) {
        this.kube = kube;
        this.workDir = workDir;
        this.kubeconfig = kube.kubeconfigFor(NAMESPACE, "oncestream-operator", workDir.resolve("operator.kubeconfig"));
    }

    /** Applies CRD, namespace and RBAC; the operator's logs go to {@code target/<dirName>}. */
    public static OperatorInstall install(KubeCluster kube, String dirName) {
        Path repo = LocalService.repoDir();
        kube.kubectl(null, "apply", "-f", repo.resolve("crds/streamjobs.oncestream.io-v1.yml").toString()).orThrow();
        kube.kubectl(null, "wait", "--for=condition=Established", "--timeout=60s", "crd/streamjobs.oncestream.io").orThrow();
        kube.admin().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        kube.kubectl(null, "apply", "-f", repo.resolve("deploy/operator/rbac.yaml").toString()).orThrow();
        try {
            return new OperatorInstall(kube, Files.createDirectories(repo.resolve("target").resolve(dirName)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path workDir() {
        return workDir;
    }

    /** Starts the packaged operator with {@code settings}; it may still be waiting for the lease. */
    public OperatorProcess start(String logName, Map<String, String> settings) {
        Path log = freshLog(logName);
        return OperatorProcess.start(LocalService.repoDir().resolve("target/quarkus-app/quarkus-run.jar"), kubeconfig, settings, log);
    }

    /** Starts the packaged operator with the image's JVM plus {@code jvmOptions}, for measurements. */
    public OperatorProcess startMeasured(String logName, List<String> jvmOptions, Map<String, String> settings) {
        return startMeasured(LocalService.repoDir().resolve("target/quarkus-app"), logName, jvmOptions, settings);
    }

    /** The same, of the packaged operator in {@code quarkusApp} (another build's target/quarkus-app, say). */
    public OperatorProcess startMeasured(Path quarkusApp, String logName, List<String> jvmOptions, Map<String, String> settings) {
        return OperatorProcess.startMeasured(quarkusApp.resolve("quarkus-run.jar"), kubeconfig, jvmOptions, settings, freshLog(logName));
    }

    private Path freshLog(String logName) {
        Path log = workDir.resolve(logName);
        try {
            Files.deleteIfExists(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return log;
    }

    /** Starts the packaged operator and waits until it leads and processes events. */
    public OperatorProcess startLeading(String logName, Map<String, String> settings, Duration timeout) {
        OperatorProcess operator = start(logName, settings);
        operator.awaitOutput("Started event processing for controller: streamjob", timeout);
        return operator;
    }

    public KubeCluster kube() {
        return kube;
    }
}
