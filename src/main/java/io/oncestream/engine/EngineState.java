package io.oncestream.engine;

/** What a worker's engine is doing, as reported in {@code /progress}. */
public enum EngineState {
    STARTING, PLANNING, READING, WRITING, COMMITTING, IDLE, WAITING_FOR_SINK, WAITING_FOR_SOURCE, COMPLETED, STOPPED, FAILED
}
