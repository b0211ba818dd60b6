package io.oncestream.operator;

import java.util.Objects;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.BooleanWithUndefined;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.operator.cache.AppliedObjects;
import io.oncestream.operator.cache.CachedObjects;
import io.oncestream.operator.model.WorkerConfigMaps;

/**
 * The job's ConfigMap; desired state from {@link WorkerConfigMaps}. Applied with server-side
 * apply like the other dependents (the SDK's default for ConfigMaps is a plain update, which
 * would need one more verb in the RBAC).
 */
@KubernetesDependent(useSSA = BooleanWithUndefined.TRUE,
        informer = @Informer(labelSelector = StreamJobResources.MANAGED_SELECTOR,
        itemStore = CachedObjects.ConfigMaps.class, informerListLimit = CachedObjects.LIST_PAGE))
public class WorkerConfigMapDependent extends CRUDKubernetesDependentResource<ConfigMap, StreamJob> {

    public WorkerConfigMapDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(StreamJob job, Context<StreamJob> context) {
        ReconcileInputs inputs = ReconcileInputs.of(context);
        return AppliedObjects.stamped(WorkerConfigMaps.desired(job, inputs.config(), inputs.savepoint()));
    }

    @Override
    public Matcher.Result<ConfigMap> match(ConfigMap actual, ConfigMap desired, StreamJob job, Context<StreamJob> context) {
        return AppliedObjects.match(actual, desired, Objects.equals(actual.getData(), desired.getData()));
    }
}
