package io.oncestream.engine;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How the engine is watched and steered from outside: the hooks at each {@link ProtocolStep}
 * (crash tests stop there), the progress the worker serves, whether to stop at the next safe
 * point, and the clock of its durations and pauses (tests give one that only counts).
 */
public record Controls(ProtocolHooks hooks, ProgressTracker progress, BooleanSupplier stopRequested, LongSupplier clockMs) {
}
