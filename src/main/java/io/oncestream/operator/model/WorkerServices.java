package io.oncestream.operator.model;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/** The headless Service of a job's workers (stable pod DNS names; the operator polls pod IPs). */
public final class WorkerServices {

    private WorkerServices() {
    }

    public static Service desired(StreamJob job) {
        String name = job.getMetadata().getName();
        return new ServiceBuilder()
                .withMetadata(OwnedObjects.metadata(job, StreamJobResources.serviceName(name)))
                .withNewSpec()
                .withClusterIP("None")
                .withPublishNotReadyAddresses(true)
                .withSelector(StreamJobResources.selectorLabels(name))
                .addNewPort().withName("http").withPort(StreamJobResources.WORKER_HTTP_PORT).withProtocol("TCP").endPort()
                .endSpec()
                .build();
    }
}
