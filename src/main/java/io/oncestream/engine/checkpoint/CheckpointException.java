package io.oncestream.engine.checkpoint;

import java.nio.file.Path;

import io.oncestream.engine.failure.OncestreamException;

/** A checkpoint file or directory that cannot be used; the message names the path. */
public class CheckpointException extends OncestreamException {

    private final Path path;

    public CheckpointException(Path path, String message, Throwable cause) {
        this(path, message, cause, true);
    }

    /** For a checkpoint that cannot be used now but may be later ({@link CheckpointUnavailableException}). */
    protected CheckpointException(Path path, String message, Throwable cause, boolean permanent) {
        super(path + ": " + message, cause, permanent);
        this.path = path;
    }

    public CheckpointException(Path path, String message) {
        this(path, message, null);
    }

    public Path path() {
        return path;
    }
}
