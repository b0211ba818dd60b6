package io.oncestream.operator.handoff;

import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.status.Rescale;

/**
 * What a reconcile applies: the spec's configuration with the savepoint of the workers'
 * epoch; during a rescale's barrier, nothing ({@link #waiting}); once its savepoint is
 * taken, the new shape with the new savepoint.
 */
public record Handoff(JobConfig config, Savepoint savepoint, Rescale rescale, boolean waiting) {

    /** Nothing is applied (an invalid or refused spec): the workers that run keep running. */
    public static final Handoff NONE = new Handoff(null, null, null, false);
}
