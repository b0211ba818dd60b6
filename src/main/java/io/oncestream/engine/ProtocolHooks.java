package io.oncestream.engine;

/** Called at each {@link ProtocolStep} of each batch; production uses {@link #NONE}. */
@FunctionalInterface
public interface ProtocolHooks {

    ProtocolHooks NONE = (step, batchId) -> { };

    void reached(ProtocolStep step, long batchId);
}
