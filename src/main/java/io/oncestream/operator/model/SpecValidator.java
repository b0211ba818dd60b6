package io.oncestream.operator.model;

import java.util.Optional;

import io.oncestream.api.StreamJob;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;

/**
 * The one judgement of a StreamJob spec, shared by the reconciler (which reports it in the
 * {@code ConfigValid} condition) and the admission webhook (which refuses the apply): they call
 * the same two methods, so they cannot disagree.
 */
public final class SpecValidator {

    private SpecValidator() {
    }

    /**
     * The worker configuration of the spec, checked as the worker will check it (defaults,
     * patterns, cross-field rules, the filter and columns compiled with the worker's CEL
     * environment).
     *
     * @throws InvalidConfigException naming the field as {@code kubectl explain} does
     *         ({@code spec.sink.cassandra.columns.amount}) and what it allows
     */
    public static JobConfig check(StreamJob job) {
        return WorkerJobConfigs.from(job);
    }

    /**
     * Why {@code desired} cannot replace {@code applied}, the configuration the workers run
     * (from the job's ConfigMap), or empty when it can. A change is refused only where the job
     * has checkpoints (its PersistentVolumeClaims exist); see {@link CheckpointCompatibility}.
     */
    public static Optional<String> refusal(StreamJob job, JobConfig desired, JobConfig applied, boolean checkpoints) {
        if (applied == null || !checkpoints) {
            return Optional.empty();
        }
        return CheckpointCompatibility.refusal(applied, desired, Boolean.TRUE.equals(job.getSpec().suspend));
    }
}
