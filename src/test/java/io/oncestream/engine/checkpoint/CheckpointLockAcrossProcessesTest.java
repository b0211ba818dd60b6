package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkpoint's {@code .lock} between processes, as two workers on one volume would meet:
 * while one JVM holds a checkpoint open, another one's {@link Checkpoint#open} is refused with
 * an error naming the lock file and, as the lock file says, the holder's pid; once the holder
 * closes it, or is killed, the next open succeeds. The other JVM is a {@link CheckpointLockHolder}; the test waits for the lines it
 * prints, never for time. (The timeout only keeps a broken test from hanging the build.)
 */
@Timeout(60)
class CheckpointLockAcrossProcessesTest {

    @TempDir
    Path dir;

    private final List<Child> children = new ArrayList<>();

    @AfterEach
    void killChildren() {
        children.forEach(c -> c.process.destroyForcibly());
    }

    @Test
    void anotherJvmIsRefusedWhileThisOneHoldsTheCheckpoint() {
        try (Checkpoint held = Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced())) {
            Child other = start();
            assertThat(other.firstLine()).startsWith("REFUSED " + lockRefusalBy(ProcessHandle.current().pid())).endsWith(")");
            assertThat(other.exitCode()).isEqualTo(3);
        }

        Child after = start();
        assertThat(after.firstLine()).isEqualTo("HOLDING " + dir);
        after.send("close");
        assertThat(after.nextLine()).isEqualTo("CLOSED");
        assertThat(after.exitCode()).isZero();
    }

    @Test
    void thisJvmIsRefusedWhileAnotherHoldsTheCheckpointAndOpensOnceItClosed() {
        Child holder = start();
        assertThat(holder.firstLine()).isEqualTo("HOLDING " + dir);

        assertThatThrownBy(() -> Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced()))
                .isInstanceOf(CheckpointLockedException.class)
                .hasMessageStartingWith(lockRefusalBy(holder.process.pid()))
                .satisfies(e -> assertThat(((CheckpointException) e).path()).isEqualTo(dir.resolve(".lock")))
                .satisfies(e -> assertThat(((CheckpointLockedException) e).holder())
                        .matches("pid " + holder.process.pid() + " on host \\S+ since 20\\d\\d-.*Z"));

        holder.send("close");
        assertThat(holder.nextLine()).isEqualTo("CLOSED");
        assertThat(holder.exitCode()).isZero();
        Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced()).close();
    }

    @Test
    void aKilledHolderLeavesTheLockFileButNotTheLock() {
        Child holder = start();
        assertThat(holder.firstLine()).isEqualTo("HOLDING " + dir);
        assertThatThrownBy(() -> Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced()))
                .hasMessageStartingWith(lockRefusalBy(holder.process.pid()));

        holder.kill();

        assertThat(dir.resolve(".lock")).exists();
        try (Checkpoint reopened = Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced())) {
            assertThat(reopened.directory()).isEqualTo(dir);
            assertThat(java.nio.file.Files.readString(dir.resolve(".lock"))).as("the lock file names its new holder only")
                    .startsWith("pid " + ProcessHandle.current().pid() + " on host ").hasLineCount(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Child next = start();
        assertThat(next.firstLine()).isEqualTo("HOLDING " + dir);
    }

    /**
     * Closing any channel on a file drops all of this process's POSIX locks on it: a second open
     * in the same JVM must be refused before it opens a channel of its own, or the refusal would
     * leave the first checkpoint unlocked for other processes.
     */
    @Test
    void aRefusedSecondOpenInThisJvmKeepsTheLockOfTheFirst() {
        try (Checkpoint held = Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced())) {
            assertThatThrownBy(() -> Checkpoint.open(dir, CheckpointLockHolder.METADATA, DurableFiles.synced()))
                    .isInstanceOf(CheckpointLockedException.class)
                    .hasMessage(lockRefusal() + " (held by this process, pid " + ProcessHandle.current().pid() + ")");

            Child other = start();
            assertThat(other.firstLine()).startsWith("REFUSED " + lockRefusalBy(ProcessHandle.current().pid()));
        }
    }

    private String lockRefusal() {
        return dir.resolve(".lock") + ": the checkpoint is in use by another worker process";
    }

    /** The start of the refusal when process {@code pid} holds the lock. */
    private String lockRefusalBy(long pid) {
        return lockRefusal() + " (pid " + pid + " on host ";
    }

    private Child start() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), CheckpointLockHolder.class.getName(), dir.toString())
                .redirectErrorStream(true);
        try {
            Child child = new Child(pb.start());
            children.add(child);
            return child;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + java, e);
        }
    }

    /** A {@link CheckpointLockHolder} process, read line by line. */
    private static final class Child {
        final Process process;
        private final BufferedReader out;
        private final Writer in;
        private final List<String> seen = new ArrayList<>();

        Child(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            this.in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        }

        /** The first line that is not JVM chatter. */
        String firstLine() {
            String line;
            do {
                line = nextLine();
            } while (!line.startsWith("HOLDING") && !line.startsWith("REFUSED"));
            return line;
        }

        String nextLine() {
            try {
                String line = out.readLine();
                if (line == null) {
                    throw new AssertionError("the child process ended; it printed " + seen);
                }
                seen.add(line);
                return line;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void send(String line) {
            try {
                in.write(line + "\n");
                in.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        int exitCode() {
            try {
                return process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        void kill() {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            assertThat(process.isAlive()).as("killed").isFalse();
        }
    }
}
