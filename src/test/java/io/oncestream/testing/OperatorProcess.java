package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged operator ({@code java -jar target/quarkus-app/quarkus-run.jar operator}, as the
 * image runs it) in its own process, with a kubeconfig of its own ServiceAccount: every call
 * it makes is decided by the RBAC it ships with. Settings are passed as system properties.
 */
public final class OperatorProcess implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Process process;
    private final Path log;
    private final int httpPort;

    private OperatorProcess(Process process, Path log, int httpPort) {
        this.process = process;
        this.log = log;
        this.httpPort = httpPort;
    }

    public static OperatorProcess start(Path runnerJar, Path kubeconfig, Map<String, String> settings, Path log) {
        int port = freePort();
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port));
        settings.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.addAll(List.of("-jar", runnerJar.toString(), "operator"));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        pb.environment().remove("KUBERNETES_MASTER");
        try {
            return new OperatorProcess(pb.start(), log, port);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the operator", e);
        }
    }

    /** Waits until the log contains {@code text}; fails with the log's tail if the process ends first. */
    public void awaitOutput(String text, Duration timeout) {
        Awaits.until(timeout, "operator output '" + text + "'\n" + tail(), () -> {
            if (log().contains(text)) {
                return true;
            }
            if (!process.isAlive()) {
                throw new AssertionError("operator exited with " + process.exitValue() + " before printing '" + text + "'\n" + tail());
            }
            return false;
        });
    }

    /** GET of one of the operator's endpoints ({@code /q/metrics}, {@code /q/health/ready}). */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    public void kill9() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String tail() {
        List<String> lines = log().lines().toList();
        return "--- last lines of " + log + " ---\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
