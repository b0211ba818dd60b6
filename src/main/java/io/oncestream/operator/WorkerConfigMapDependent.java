package io.oncestream.operator;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;

/** The job's ConfigMap, applied with server-side apply; desired state from {@link WorkerConfigMaps}. */
@KubernetesDependent(informer = @Informer(labelSelector = ReconcileInputs.MANAGED_SELECTOR))
public class WorkerConfigMapDependent extends CRUDKubernetesDependentResource<ConfigMap, StreamJob> {

    public WorkerConfigMapDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(StreamJob job, Context<StreamJob> context) {
        return WorkerConfigMaps.desired(job, ReconcileInputs.of(context).config());
    }
}
