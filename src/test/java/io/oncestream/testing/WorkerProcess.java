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

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A real worker process ({@code io.oncestream.worker.WorkerMain}) started from the test class
 * path, with its output in a log file: tests wait for lines, read {@code /progress}, send
 * SIGTERM, or kill it with SIGKILL.
 */
public final class WorkerProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Process process;
    private final Path log;
    private final int httpPort;

    private WorkerProcess(Process process, Path log, int httpPort) {
        this.process = process;
        this.log = log;
        this.httpPort = httpPort;
    }

    /** Starts {@code worker --config CONFIG --checkpoint CHECKPOINT} with extra environment. */
    public static WorkerProcess start(Path config, Path checkpoint, int workerIndex, Map<String, String> env, Path log) {
        return start(List.of("-cp", System.getProperty("java.class.path"), "io.oncestream.worker.WorkerMain"),
                config, checkpoint, workerIndex, env, log);
    }

    /** Starts the worker as the image does: {@code java -jar quarkus-run.jar worker ...} of the packaged build. */
    public static WorkerProcess startPackaged(Path runnerJar, Path config, Path checkpoint, Map<String, String> env, Path log) {
        return start(List.of("-jar", runnerJar.toString(), "worker"), config, checkpoint, 0, env, log);
    }

    private static WorkerProcess start(List<String> launch, Path config, Path checkpoint, int workerIndex,
            Map<String, String> env, Path log) {
        int port = freePort();
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        command.addAll(launch);
        command.addAll(List.of(
                "--config", config.toString(), "--checkpoint", checkpoint.toString(),
                "--worker-index", String.valueOf(workerIndex), "--http-host", "127.0.0.1", "--http-port", String.valueOf(port)));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        try {
            return new WorkerProcess(pb.start(), log, port);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the worker", e);
        }
    }

    /** Waits until the log contains {@code text}; fails with the log's tail if the process ends first. */
    public void awaitOutput(String text, Duration timeout) {
        Awaits.until(timeout, "worker output '" + text + "'\n" + tail(), () -> {
            if (log().contains(text)) {
                return true;
            }
            if (!process.isAlive()) {
                throw new AssertionError("worker exited with " + process.exitValue() + " before printing '" + text + "'\n" + tail());
            }
            return false;
        });
    }

    /** The worker's {@code /progress} JSON, or null if it does not answer. */
    public JsonNode progress() {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/progress"))
                    .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** GET of another endpoint, e.g. {@code /metrics}; returns status and body. */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** SIGKILL, as {@code kill -9}: no shutdown hooks, no flushing. */
    public void kill9() {
        process.destroyForcibly();
        waitForExit(Duration.ofSeconds(30));
    }

    /** SIGTERM: the worker stops at a safe point. */
    public int terminate(Duration timeout) {
        process.destroy();
        return waitForExit(timeout);
    }

    public int waitForExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("worker did not exit within " + timeout.toSeconds() + " s\n" + tail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
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

    private String tail() {
        List<String> lines = log().lines().toList();
        return "--- last lines of " + log + " ---\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
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
