package io.oncestream.testing;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A real worker process ({@code io.oncestream.worker.WorkerMain}) started from the test class
 * path, with its output in a log file: tests wait for lines, read {@code /progress}, send
 * SIGTERM, or kill it with SIGKILL.
 */
public final class WorkerProcess extends ChildProcess {

    private static final ObjectMapper JSON = new ObjectMapper();

    private WorkerProcess(Process process, Path log, int httpPort) {
        super("worker", process, log, httpPort);
    }

    /** Starts {@code worker --config CONFIG --checkpoint CHECKPOINT} with extra environment. */
    public static WorkerProcess start(Path config, Path checkpoint, int workerIndex, Map<String, String> env, Path log) {
        return start(config, checkpoint, workerIndex, env, log, List.of());
    }

    /** {@link #start(Path, Path, int, Map, Path)} with more options ({@code --lock-wait 2}, say). */
    public static WorkerProcess start(Path config, Path checkpoint, int workerIndex, Map<String, String> env, Path log,
            List<String> options) {
        List<String> launch = new ArrayList<>(List.of("-cp", System.getProperty("java.class.path"), "io.oncestream.worker.WorkerMain"));
        launch.addAll(options);
        return start(launch, config, checkpoint, workerIndex, env, log);
    }

    /** Starts the worker as the image does: {@code java -jar quarkus-run.jar worker ...} of the packaged build. */
    public static WorkerProcess startPackaged(Path runnerJar, Path config, Path checkpoint, Map<String, String> env, Path log) {
        return start(List.of("-jar", runnerJar.toString(), "worker"), config, checkpoint, 0, env, log);
    }

    private static WorkerProcess start(List<String> launch, Path config, Path checkpoint, int workerIndex,
            Map<String, String> env, Path log) {
        int port = freePort();
        List<String> args = new ArrayList<>(launch);
        args.addAll(List.of(
                "--config", config.toString(), "--checkpoint", checkpoint.toString(),
                "--worker-index", String.valueOf(workerIndex), "--http-host", "127.0.0.1", "--http-port", String.valueOf(port)));
        return new WorkerProcess(launch("worker", List.of("-Xmx512m"), args, env, log), log, port);
    }

    /** The worker's {@code /progress} JSON, or null if it does not answer. */
    public JsonNode progress() {
        try {
            HttpResponse<String> response = get("/progress");
            return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** A worker left running at the end of a test is killed: tests restart workers on purpose, never gracefully by accident. */
    @Override
    public void close() {
        if (isAlive()) {
            kill9();
        }
    }
}
