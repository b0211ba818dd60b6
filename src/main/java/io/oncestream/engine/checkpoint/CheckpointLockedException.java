package io.oncestream.engine.checkpoint;

import java.nio.file.Path;

/**
 * Another process holds the checkpoint's {@code .lock}: another worker on the same volume, for
 * instance the process of a force-deleted pod that is still being killed. The lock opens when
 * that process exits, so this is waited out.
 */
public final class CheckpointLockedException extends CheckpointUnavailableException {

    private final String holder;

    public CheckpointLockedException(Path lockFile, String holder) {
        super(lockFile, "the checkpoint is in use by another worker process (" + holder + ")", null);
        this.holder = holder;
    }

    /** Who holds the lock, as its lock file says ({@code pid 7 on host paid-orders-0 since ...}), or why that is unknown. */
    public String holder() {
        return holder;
    }
}
