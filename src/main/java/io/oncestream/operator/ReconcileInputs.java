package io.oncestream.operator;

import io.javaoperatorsdk.operator.api.reconciler.Context;

import io.oncestream.api.StreamJob;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.model.WorkerSettings;

/**
 * What the reconciler computed once per reconcile and hands to the dependents: the checked
 * worker configuration, the operator-wide worker settings, and whether an availableNow job
 * has drained its partitions for the current spec (its workers are then stopped). The savepoint
 * is the one the workers' epoch starts from, null for the job's first epoch.
 */
record ReconcileInputs(JobConfig config, Savepoint savepoint, WorkerSettings settings, boolean drained) {

    private static final String KEY = ReconcileInputs.class.getName();

    void putInto(Context<StreamJob> context) {
        context.managedWorkflowAndDependentResourceContext().put(KEY, this);
    }

    static ReconcileInputs of(Context<StreamJob> context) {
        return context.managedWorkflowAndDependentResourceContext().getMandatory(KEY, ReconcileInputs.class);
    }
}
