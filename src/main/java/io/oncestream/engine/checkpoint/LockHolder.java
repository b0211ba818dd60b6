package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Who holds a checkpoint's {@code .lock}: the holder writes one line into the file it locked,
 * {@code pid 7 on host paid-orders-0 since 2026-12-05T16:40:00Z}, so that a worker that finds
 * the lock held can say by whom. Informational only: the lock itself is the fence, and a file
 * left by an older build (empty) or by a holder that died mid-write still locks the same way.
 */
final class LockHolder {

    private static final Logger LOG = Logger.getLogger(LockHolder.class.getName());
    private static final int MAX_LINE = 512;

    private LockHolder() {
    }

    /**
     * Writes this process's line into the locked file, replacing the previous holder's. A
     * failure (a full volume, say) only leaves the file naming nobody or the previous holder:
     * it is logged, and the lock holds all the same.
     */
    static void write(FileChannel locked, Path lockFile) {
        String line = "pid " + ProcessHandle.current().pid() + " on host " + host() + " since " + Instant.now() + "\n";
        try {
            locked.truncate(0);
            ByteBuffer buffer = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
            long position = 0;
            while (buffer.hasRemaining()) {
                position += locked.write(buffer, position);
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, lockFile + ": cannot say who holds the lock: " + Checkpoint.describe(e));
        }
    }

    /** What the lock file says about its holder, or that it does not say. */
    static String read(Path lockFile) {
        try {
            byte[] bytes = Files.readAllBytes(lockFile);
            String text = new String(bytes, 0, Math.min(bytes.length, MAX_LINE), StandardCharsets.UTF_8).strip();
            return text.startsWith("pid ") && !text.contains("\n") ? text : "holder unknown: the lock file names none";
        } catch (NoSuchFileException e) {
            return "holder unknown: the lock file is gone";
        } catch (IOException e) {
            return "holder unknown: " + Checkpoint.describe(e);
        }
    }

    /** The pod's name in a pod (its hostname), else the machine's. */
    private static String host() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
