package io.oncestream.operator;

import java.util.Objects;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.operator.cache.AppliedObjects;
import io.oncestream.operator.cache.CachedObjects;
import io.oncestream.operator.model.WorkerConfigMaps;
import io.oncestream.operator.model.WorkerStatefulSets;

/** The workers' StatefulSet; desired state from {@link WorkerStatefulSets}, rolled by the config hash. */
@KubernetesDependent(informer = @Informer(labelSelector = StreamJobResources.MANAGED_SELECTOR,
        itemStore = CachedObjects.StatefulSets.class, informerListLimit = CachedObjects.LIST_PAGE))
public class WorkerStatefulSetDependent extends CRUDKubernetesDependentResource<StatefulSet, StreamJob> {

    public WorkerStatefulSetDependent() {
        super(StatefulSet.class);
    }

    @Override
    protected StatefulSet desired(StreamJob job, Context<StreamJob> context) {
        ReconcileInputs inputs = ReconcileInputs.of(context);
        return AppliedObjects.stamped(
                WorkerStatefulSets.desired(job, inputs.settings(), WorkerConfigMaps.hash(inputs.config(), inputs.savepoint()),
                        inputs.drained(), inputs.config().parallelism()));
    }

    @Override
    public Matcher.Result<StatefulSet> match(StatefulSet actual, StatefulSet desired, StreamJob job, Context<StreamJob> context) {
        return AppliedObjects.match(actual, desired, Objects.equals(actual.getSpec().getReplicas(), desired.getSpec().getReplicas()));
    }
}
