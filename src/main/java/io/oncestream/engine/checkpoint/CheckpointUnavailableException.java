package io.oncestream.engine.checkpoint;

import java.nio.file.Path;

/**
 * A checkpoint file or directory that cannot be read or written now: the volume is full or
 * read-only, an I/O error, the lock is held. Unlike a corrupt or foreign checkpoint this may
 * pass, so the worker waits and tries again; the message names the path and the cause.
 */
public class CheckpointUnavailableException extends CheckpointException {

    public CheckpointUnavailableException(Path path, String message, Throwable cause) {
        super(path, message, cause, false);
    }
}
