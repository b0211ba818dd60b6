package io.oncestream.engine.checkpoint;

import java.nio.file.Path;

/** A checkpoint file or directory that cannot be used; the message names the path. */
public class CheckpointException extends RuntimeException {

    private final Path path;

    public CheckpointException(Path path, String message, Throwable cause) {
        super(path + ": " + message, cause);
        this.path = path;
    }

    public CheckpointException(Path path, String message) {
        this(path, message, null);
    }

    public Path path() {
        return path;
    }
}
