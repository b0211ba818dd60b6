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
 * A JVM the tests start as its own process (a worker, the operator), with its output in a log
 * file and an HTTP port on loopback: tests wait for log lines, call its endpoints, send
 * SIGTERM or kill it with SIGKILL.
 */
public abstract class ChildProcess implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final String what;
    private final Process process;
    private final Path log;
    private final int httpPort;

    protected ChildProcess(String what, Process process, Path log, int httpPort) {
        this.what = what;
        this.process = process;
        this.log = log;
        this.httpPort = httpPort;
    }

    /** Starts {@code java <jvmArgs...> <args...>} with this test JVM's java, output appended to {@code log}. */
    protected static Process launch(String what, List<String> jvmArgs, List<String> args, Map<String, String> env, Path log) {
        List<String> quickToStart = new ArrayList<>(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        quickToStart.addAll(jvmArgs);
        return launchJava(what, quickToStart, args, env, log);
    }

    /** As {@link #launch}, with only the JVM options given (no test tuning): for measurements. */
    protected static Process launchJava(String what, List<String> jvmArgs, List<String> args, Map<String, String> env, Path log) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvmArgs);
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        try {
            return pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the " + what, e);
        }
    }

    /** Waits until the log contains {@code text}; fails with the log's tail if the process ends first. */
    public void awaitOutput(String text, Duration timeout) {
        Awaits.until(timeout, what + " output '" + text + "'\n" + tail(), () -> {
            if (log().contains(text)) {
                return true;
            }
            if (!process.isAlive()) {
                throw new AssertionError(what + " exited with " + process.exitValue() + " before printing '" + text + "'\n" + tail());
            }
            return false;
        });
    }

    /** GET of one of its HTTP endpoints; returns status and body. */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** SIGKILL, as {@code kill -9}: no shutdown hooks, no flushing. */
    public void kill9() {
        process.destroyForcibly();
        waitForExit(Duration.ofSeconds(30));
    }

    /** SIGTERM, then the exit code. */
    public int terminate(Duration timeout) {
        process.destroy();
        return waitForExit(timeout);
    }

    public int waitForExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(what + " did not exit within " + timeout.toSeconds() + " s\n" + tail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
    }

    public long pid() {
        return process.pid();
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

    /** The last lines of the log, for failure messages. */
    public String tail() {
        List<String> lines = log().lines().toList();
        return "--- last lines of " + log + " ---\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }

    protected int httpPort() {
        return httpPort;
    }

    /** Stops it if it still runs: SIGTERM, then SIGKILL after 15 s. */
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

    protected static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
