package io.oncestream.engine;

/** Thrown out of a batch when the worker was asked to stop; the open batch is abandoned, which is safe. */
public class StopRequestedException extends RuntimeException {

    public StopRequestedException() {
        super("stop requested", null, false, false);
    }
}
