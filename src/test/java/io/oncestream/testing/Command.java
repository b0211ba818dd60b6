package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** An external program the tests run (a service script, kubectl, helm), with its output captured. */
public final class Command {

    private final List<String> argv;
    private final Map<String, String> env = new HashMap<>();
    private Path directory;
    private String stdin;

    public Command(List<String> argv) {
        this.argv = List.copyOf(argv);
    }

    public static Command of(String... argv) {
        return new Command(List.of(argv));
    }

    public Command env(Map<String, String> values) {
        env.putAll(values);
        return this;
    }

    public Command directory(Path dir) {
        this.directory = dir;
        return this;
    }

    public Command stdin(String text) {
        this.stdin = text;
        return this;
    }

    /** Runs the program to its end (or kills it after {@code timeout}) and returns what it did. */
    public Result run(Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().putAll(env);
        if (directory != null) {
            pb.directory(directory.toFile());
        }
        Path out = null;
        Path err = null;
        Path in = null;
        try {
            out = Files.createTempFile("oncestream-cmd", ".out");
            err = Files.createTempFile("oncestream-cmd", ".err");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            if (stdin != null) {
                in = Files.createTempFile("oncestream-cmd", ".in");
                Files.writeString(in, stdin);
                pb.redirectInput(in.toFile());
            }
            Process process = pb.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(this + " did not finish in " + timeout);
            }
            return new Result(this, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + this, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + this, e);
        } finally {
            for (Path p : new Path[] {out, err, in}) {
                if (p != null) {
                    p.toFile().delete();
                }
            }
        }
    }

    @Override
    public String toString() {
        return String.join(" ", argv);
    }

    /** What a finished program did. */
    public record Result(Command command, int exitCode, String stdout, String stderr) {

        /** This result, or an exception with the program's output when it failed. */
        public Result orThrow() {
            if (exitCode != 0) {
                throw new IllegalStateException("'" + command + "' exited with " + exitCode + "\nstdout:\n" + stdout
                        + "\nstderr:\n" + stderr);
            }
            return this;
        }
    }
}
