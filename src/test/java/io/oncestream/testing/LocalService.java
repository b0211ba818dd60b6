package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One of the real services of {@code deploy/local/} ({@code kafka}, {@code cassandra},
 * {@code kube}, {@code node}), driven through its script with the test suite's settings from
 * {@code deploy/local/test.env}.
 *
 * <p>A service is started at most once per test run: the instance lives in JUnit's root
 * store, shared by every test class, and JUnit closes it when the run ends. A service that
 * was already running when the run began (a developer's {@code test-services.sh start}) is
 * reused and left running.
 */
public final class LocalService implements AutoCloseable {

    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(45);

    private final String name;
    private final Path repo;
    private final Map<String, String> settings;
    private final boolean startedByTests;

    private LocalService(String name, Path repo, Map<String, String> settings) {
        this.name = name;
        this.repo = repo;
        this.settings = settings;
        this.startedByTests = !isRunning();
        if (startedByTests) {
            run("start");
        } else {
            System.out.printf("[oncestream-tests] reusing the running %s service%n", name);
        }
    }

    /** The shared instance of service {@code name} for this test run, started on first use. */
    public static LocalService shared(ExtensionContext context, String name) {
        ExtensionContext.Store store = context.getRoot().getStore(ExtensionContext.Namespace.create(LocalService.class));
        return store.computeIfAbsent(name, n -> new LocalService(n, repoDir(), testSettings(repoDir())), LocalService.class);
    }

    /** The repository's top directory (Maven passes it; otherwise the working directory). */
    public static Path repoDir() {
        return Path.of(System.getProperty("oncestream.repo.dir", System.getProperty("user.dir"))).toAbsolutePath();
    }

    /** The service's data directory (its logs, PID file and state), as its script keeps it. */
    public Path dataDir() {
        return Path.of(setting("ONCESTREAM_LOCAL_DIR")).resolve(name);
    }

    /** The value of a setting from {@code deploy/local/test.env}, e.g. {@code KAFKA_PORT}. */
    public String setting(String key) {
        String value = settings.get(key);
        if (value == null) {
            throw new IllegalArgumentException("no setting " + key + " in deploy/local/test.env");
        }
        return value;
    }

    /** The {@code KEY=VALUE} lines the script's {@code env} action prints. */
    public Map<String, String> env() {
        return settingLines(run("env"));
    }

    /** {@code KEY=VALUE} lines, as a script's {@code env} action prints them. */
    static Map<String, String> settingLines(String text) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                env.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        return env;
    }

    public boolean isRunning() {
        return exec("status").exitCode() == 0;
    }

    public void stop() {
        run("stop");
    }

    public void start() {
        run("start");
    }

    /** Stops the service and starts it again on the same data: what a node restart is. */
    public void restart() {
        stop();
        start();
    }

    @Override
    public void close() {
        if (startedByTests) {
            run("stop");
        }
    }

    /** Runs the script with {@code args} (e.g. {@code load}), printing what it says; fails if it fails. */
    public String run(String... args) {
        Command.Result result = exec(args);
        if (!result.stdout().isBlank()) {
            System.out.print(result.stdout().endsWith("\n") ? result.stdout() : result.stdout() + "\n");
        }
        return result.orThrow().stdout();
    }

    private Command.Result exec(String... args) {
        return script(repo, settings, name, args);
    }

    /**
     * Runs {@code deploy/local/<script>.sh} with {@code args} and the test stack's settings, for
     * scripts that are tools rather than services (e.g. {@code faults}); fails if it fails.
     */
    public static String runScript(String script, String... args) {
        Path repo = repoDir();
        return script(repo, testSettings(repo), script, args).orThrow().stdout();
    }

    private static Command.Result script(Path repo, Map<String, String> settings, String name, String... args) {
        // The scripts log to stderr and print results to stdout; both are kept for errors.
        java.util.List<String> argv = new java.util.ArrayList<>(java.util.List.of("bash",
                repo.resolve("deploy/local/" + name + ".sh").toString()));
        argv.addAll(java.util.List.of(args));
        Command.Result result = new Command(argv).directory(repo).env(settings).run(SCRIPT_TIMEOUT);
        if (!result.stderr().isBlank()) {
            System.out.print(result.stderr());
        }
        return result;
    }

    /** Reads {@code deploy/local/test.env}; relative directories are taken from the repository. */
    static Map<String, String> testSettings(Path repo) {
        Map<String, String> settings = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(repo.resolve("deploy/local/test.env"))) {
                String trimmed = line.strip();
                if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                    continue;
                }
                int eq = trimmed.indexOf('=');
                settings.put(trimmed.substring(0, eq), trimmed.substring(eq + 1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read deploy/local/test.env", e);
        }
        settings.computeIfPresent("ONCESTREAM_LOCAL_DIR", (k, v) -> repo.resolve(v).toString());
        return settings;
    }

}
