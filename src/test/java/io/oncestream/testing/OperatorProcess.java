package io.oncestream.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The packaged operator ({@code java -jar target/quarkus-app/quarkus-run.jar operator}, as the
 * image runs it) in its own process, with a kubeconfig of its own ServiceAccount: every call
 * it makes is decided by the RBAC it ships with. Settings are passed as system properties;
 * metrics and health answer on a free loopback port.
 */
public final class OperatorProcess extends ChildProcess {

    private OperatorProcess(Process process, Path log, int httpPort) {
        super("operator", process, log, httpPort);
    }

    /** What the image's {@code JAVA_TOOL_OPTIONS} give the operator's JVM besides its heap (src/main/docker/Dockerfile). */
    private static final String IMAGE_OPTIONS = "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2";

    public static OperatorProcess start(Path runnerJar, Path kubeconfig, Map<String, String> settings, Path log) {
        int port = freePort();
        List<String> jvm = new ArrayList<>(List.of("-Xmx256m", IMAGE_OPTIONS, "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port));
        settings.forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        return new OperatorProcess(launch("operator", jvm, List.of("-jar", runnerJar.toString(), "operator"),
                Map.of("KUBECONFIG", kubeconfig.toString()), log), log, port);
    }

    /** As {@link #start}, with the JVM as the image runs it plus {@code jvmOptions} (heap, GC): for benchmarks. */
    public static OperatorProcess startMeasured(Path runnerJar, Path kubeconfig, List<String> jvmOptions,
            Map<String, String> settings, Path log) {
        int port = freePort();
        List<String> jvm = new ArrayList<>(jvmOptions);
        jvm.addAll(List.of(IMAGE_OPTIONS, "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port));
        settings.forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        return new OperatorProcess(launchJava("operator", jvm, List.of("-jar", runnerJar.toString(), "operator"),
                Map.of("KUBECONFIG", kubeconfig.toString()), log), log, port);
    }
}
