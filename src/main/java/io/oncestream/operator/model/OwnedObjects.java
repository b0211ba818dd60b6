package io.oncestream.operator.model;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/** Metadata of an object owned by a StreamJob: name, namespace, labels, controller reference. */
public final class OwnedObjects {

    private OwnedObjects() {
    }

    static ObjectMeta metadata(StreamJob job, String name) {
        String jobName = job.getMetadata().getName();
        return new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(job.getMetadata().getNamespace())
                .withLabels(StreamJobResources.labels(jobName))
                .withOwnerReferences(new OwnerReferenceBuilder()
                        .withApiVersion(job.getApiVersion())
                        .withKind(job.getKind())
                        .withName(jobName)
                        .withUid(job.getMetadata().getUid())
                        .withController(true)
                        .withBlockOwnerDeletion(true)
                        .build())
                .build();
    }
}
