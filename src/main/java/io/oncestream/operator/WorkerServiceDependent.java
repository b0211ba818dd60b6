package io.oncestream.operator;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.operator.cache.AppliedObjects;
import io.oncestream.operator.cache.CachedObjects;
import io.oncestream.operator.model.WorkerServices;

/** The workers' headless Service; desired state from {@link WorkerServices}. */
@KubernetesDependent(informer = @Informer(labelSelector = StreamJobResources.MANAGED_SELECTOR,
        itemStore = CachedObjects.Services.class, informerListLimit = CachedObjects.LIST_PAGE))
public class WorkerServiceDependent extends CRUDKubernetesDependentResource<Service, StreamJob> {

    public WorkerServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(StreamJob job, Context<StreamJob> context) {
        return AppliedObjects.stamped(WorkerServices.desired(job));
    }

    @Override
    public Matcher.Result<Service> match(Service actual, Service desired, StreamJob job, Context<StreamJob> context) {
        return AppliedObjects.match(actual, desired, true);
    }
}
