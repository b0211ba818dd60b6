package io.oncestream.worker;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.oncestream.contract.EngineState;
import io.oncestream.engine.Backoff;
import io.oncestream.engine.MicroBatchEngine;
import io.oncestream.engine.Pause;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointContents;
import io.oncestream.engine.checkpoint.CheckpointLockedException;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.CheckpointUnavailableException;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.checkpoint.Savepoint;

/**
 * Opening the checkpoint when its lock may be held for a while: by the process of a pod that
 * was force-deleted and is still being killed, whose successor the StatefulSet starts at once
 * on the same volume. The worker waits, polling with a bounded back-off (0.1 s doubling to 2 s),
 * reports {@code WAITING_FOR_CHECKPOINT_LOCK} with the holder and since when, and opens the
 * checkpoint as soon as the lock is free. After {@code maxWait} it gives up with
 * {@link LockWaitExpiredException}, and the worker exits so that the kubelet restarts it.
 *
 * <p>A volume that cannot be written (full, read-only) is waited out here too, for as long as it
 * lasts, with the engine's back-off (1 s doubling to 5 s) and its state,
 * {@code WAITING_FOR_CHECKPOINT}: it takes a person to free space or make the volume writable,
 * and the worker should start within seconds of that, not after a restart's back-off of up to
 * 30 s, nor report a vague {@code RETRYING} meanwhile.
 */
final class CheckpointLockWait {

    private static final Logger LOG = Logger.getLogger(CheckpointLockWait.class.getName());

    private CheckpointLockWait() {
    }

    /** Opens {@code dir}, seeded from {@code seed} (null for a job's first epoch), waiting for its lock as said above. */
    static Checkpoint open(Path dir, CheckpointMetadata expected, Savepoint seed, DurableFiles files, int segmentEntries, Duration maxWait,
            ProgressTracker progress, BooleanSupplier stopRequested) {
        Instant since = null;
        Instant volumeSince = null;
        Backoff lockPauses = new Backoff(100, 2_000);
        Backoff volumePauses = new Backoff(1_000, 5_000);
        while (true) {
            try {
                Checkpoint checkpoint = Checkpoint.open(dir, expected, seed, files, segmentEntries);
                if (since != null) {
                    LOG.log(Level.INFO, "checkpoint lock acquired after waiting "
                            + Duration.between(since, Instant.now()).toMillis() + " ms");
                }
                if (volumeSince != null) {
                    LOG.log(Level.INFO, "checkpoint volume usable again after waiting "
                            + Duration.between(volumeSince, Instant.now()).toMillis() + " ms");
                }
                if (since != null || volumeSince != null) {
                    progress.error(null);
                    progress.state(EngineState.STARTING);
                }
                return checkpoint;
            } catch (CheckpointLockedException e) {
                Instant now = Instant.now();
                if (since == null) {
                    since = now;
                    LOG.log(Level.WARNING, e.getMessage() + "; waiting up to " + maxWait.toSeconds() + " s for it to be released");
                    reportCommitted(dir, progress);
                }
                if (Duration.between(since, now).compareTo(maxWait) >= 0) {
                    throw new LockWaitExpiredException(e.getMessage() + "; gave up after waiting " + maxWait.toSeconds()
                            + " s (since " + since + ")", e);
                }
                progress.state(EngineState.WAITING_FOR_CHECKPOINT_LOCK);
                progress.error(e.getMessage() + "; waiting since " + since);
                Pause.sleep(lockPauses.next(), stopRequested);
            } catch (CheckpointUnavailableException e) {
                if (volumeSince == null) {
                    volumeSince = Instant.now();
                    reportCommitted(dir, progress);
                }
                progress.state(EngineState.WAITING_FOR_CHECKPOINT);
                progress.error(e.getMessage());
                long pauseMs = volumePauses.next();
                LOG.log(Level.WARNING, "cannot open the checkpoint, retrying in " + pauseMs + " ms (free space on the"
                        + " volume or make it writable; nothing is read or written meanwhile): " + e.getMessage());
                Pause.sleep(pauseMs, stopRequested);
            }
        }
    }

    /**
     * What the checkpoint says was committed, read without the lock (its files are create-only),
     * so that the job's status keeps the worker's batch and offsets while it waits. Only
     * informational: a checkpoint that cannot be read now is read again once it is opened.
     */
    private static void reportCommitted(Path dir, ProgressTracker progress) {
        try {
            MicroBatchEngine.reportRecovered(CheckpointContents.read(dir), progress);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "cannot read " + dir + " while another process holds it: " + e.getMessage());
        }
    }


    /** The lock stayed held longer than the worker waits: it exits (code 3) to be restarted with the kubelet's back-off. */
    static final class LockWaitExpiredException extends RuntimeException {
        LockWaitExpiredException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
