package io.oncestream.operator;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/** The workers' headless Service; desired state from {@link WorkerServices}. */
@KubernetesDependent(informer = @Informer(labelSelector = StreamJobResources.MANAGED_SELECTOR))
public class WorkerServiceDependent extends CRUDKubernetesDependentResource<Service, StreamJob> {

    public WorkerServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(StreamJob job, Context<StreamJob> context) {
        return WorkerServices.desired(job);
    }
}
