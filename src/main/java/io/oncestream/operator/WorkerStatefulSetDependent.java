package io.oncestream.operator;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/** The workers' StatefulSet; desired state from {@link WorkerStatefulSets}, rolled by the config hash. */
@KubernetesDependent(informer = @Informer(labelSelector = StreamJobResources.MANAGED_SELECTOR))
public class WorkerStatefulSetDependent extends CRUDKubernetesDependentResource<StatefulSet, StreamJob> {

    public WorkerStatefulSetDependent() {
        super(StatefulSet.class);
    }

    @Override
    protected StatefulSet desired(StreamJob job, Context<StreamJob> context) {
        ReconcileInputs inputs = ReconcileInputs.of(context);
        return WorkerStatefulSets.desired(job, inputs.settings(), WorkerConfigMaps.hash(inputs.config()), inputs.drained());
    }
}
