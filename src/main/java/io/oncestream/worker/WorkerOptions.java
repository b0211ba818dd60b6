package io.oncestream.worker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.oncestream.contract.WorkerEndpoints;

/**
 * The worker's command line:
 * {@code worker --config FILE --checkpoint DIR [--worker-index N] [--http-host H] [--http-port P] [--when-done exit|wait]}.
 * {@code --when-done wait} keeps a worker whose {@code availableNow} job drained (or failed)
 * running and reporting until it is stopped, instead of exiting: in a pod, an exit would only
 * make the kubelet start it again.
 * {@code --lock-wait SECONDS} (600) is how long the worker waits for its checkpoint's lock, held
 * by another process, before it exits with code 3 to be restarted.
 * {@code --savepoint FILE} is the savepoint the worker's epoch starts from (docs/protocol.md §11);
 * by default {@code savepoint.json} next to the configuration, if there is one (the operator puts
 * it in the same ConfigMap), else none: the job's first epoch.
 * {@code --lag-interval SECONDS} (5) is how often the worker reads the job's lag from Kafka, on a
 * thread of its own; 0 reads it never (the lag is then only what batches see).
 * The worker index defaults to {@code ONCESTREAM_WORKER_INDEX}, else to the ordinal at the end
 * of {@code POD_NAME} (a StatefulSet pod {@code job-2} is worker 2), else 0.
 */
record WorkerOptions(Path config, Path checkpoint, int workerIndex, String httpHost, int httpPort, boolean waitWhenDone,
        Duration lockWait, Path savepoint, Duration lagInterval) {

    static final String USAGE = "usage: worker --config FILE --checkpoint DIR [--worker-index N] [--http-host HOST] [--http-port PORT]"
            + " [--when-done exit|wait] [--lock-wait SECONDS] [--savepoint FILE] [--lag-interval SECONDS]";

    /** The savepoint's name next to the configuration (its key in the worker ConfigMap). */
    static final String SAVEPOINT_FILE = "savepoint.json";

    /** How often the lag is read from Kafka unless {@code --lag-interval} says otherwise. */
    static final Duration DEFAULT_LAG_INTERVAL = Duration.ofSeconds(5);

    static WorkerOptions parse(String[] args, Map<String, String> env) {
        Path config = null;
        Path checkpoint = null;
        Integer index = null;
        String host = "0.0.0.0";
        int port = WorkerEndpoints.PORT;
        boolean waitWhenDone = false;
        Duration lockWait = EngineAssembly.Options.DEFAULT_LOCK_WAIT;
        Path savepoint = null;
        Duration lagInterval = DEFAULT_LAG_INTERVAL;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(arg + " needs a value\n" + USAGE);
            }
            String value = args[++i];
            switch (arg) {
                case "--config" -> config = Path.of(value);
                case "--checkpoint" -> checkpoint = Path.of(value);
                case "--worker-index" -> index = number(arg, value);
                case "--http-host" -> host = value;
                case "--http-port" -> port = number(arg, value);
                case "--when-done" -> waitWhenDone = switch (value) {
                    case "exit" -> false;
                    case "wait" -> true;
                    default -> throw new IllegalArgumentException("--when-done takes exit or wait, not " + value + "\n" + USAGE);
                };
                case "--lock-wait" -> lockWait = Duration.ofSeconds(number(arg, value));
                case "--savepoint" -> savepoint = Path.of(value);
                case "--lag-interval" -> lagInterval = Duration.ofSeconds(number(arg, value));
                default -> throw new IllegalArgumentException("unknown option " + arg + "\n" + USAGE);
            }
        }
        if (config == null || checkpoint == null) {
            throw new IllegalArgumentException("--config and --checkpoint are required\n" + USAGE);
        }
        if (index == null) {
            index = indexFromEnvironment(env);
        }
        if (lockWait.isNegative()) {
            throw new IllegalArgumentException("--lock-wait must not be negative\n" + USAGE);
        }
        if (lagInterval.isNegative()) {
            throw new IllegalArgumentException("--lag-interval must not be negative\n" + USAGE);
        }
        if (savepoint == null) {
            Path beside = config.resolveSibling(SAVEPOINT_FILE);
            savepoint = java.nio.file.Files.exists(beside) ? beside : null;
        }
        return new WorkerOptions(config, checkpoint, index, host, port, waitWhenDone, lockWait, savepoint, lagInterval);
    }

    private static int indexFromEnvironment(Map<String, String> env) {
        String explicit = env.get("ONCESTREAM_WORKER_INDEX");
        if (explicit != null && !explicit.isBlank()) {
            return number("ONCESTREAM_WORKER_INDEX", explicit);
        }
        String pod = env.get("POD_NAME");
        if (pod != null && pod.matches(".*-\\d+")) {
            return Integer.parseInt(pod.substring(pod.lastIndexOf('-') + 1));
        }
        return 0;
    }

    private static int number(String what, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": '" + value + "' is not a number");
        }
    }
}
