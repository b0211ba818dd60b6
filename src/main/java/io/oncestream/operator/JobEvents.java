package io.oncestream.operator;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.status.PhaseEvents;

/** Records {@link PhaseEvents} as core/v1 Events on the StreamJob ({@code kubectl describe sj} shows them). */
final class JobEvents {

    private static final Logger LOG = Logger.getLogger(JobEvents.class);
    private static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;

    JobEvents(KubernetesClient client) {
        this.client = client;
    }

    void record(StreamJob job, List<PhaseEvents.JobEvent> events) {
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        for (PhaseEvents.JobEvent e : events) {
            String message = e.message() == null ? "" : e.message();
            if (message.length() > MAX_MESSAGE) {
                message = message.substring(0, MAX_MESSAGE - 3) + "...";
            }
            try {
                client.v1().events().inNamespace(job.getMetadata().getNamespace()).resource(new EventBuilder()
                        .withNewMetadata().withGenerateName(job.getMetadata().getName() + ".")
                        .withNamespace(job.getMetadata().getNamespace()).endMetadata()
                        .withNewInvolvedObject()
                        .withApiVersion(job.getApiVersion()).withKind(job.getKind())
                        .withName(job.getMetadata().getName()).withNamespace(job.getMetadata().getNamespace())
                        .withUid(job.getMetadata().getUid())
                        .endInvolvedObject()
                        .withType(e.type()).withReason(e.reason()).withMessage(message)
                        .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                        .withNewSource().withComponent("oncestream-operator").endSource()
                        .withReportingComponent("oncestream.io/operator").withReportingInstance(OperatorIdentity.get())
                        .build()).create();
            } catch (KubernetesClientException failure) {
                // An event is a courtesy: the status already says the same.
                LOG.warnf("could not record event %s on %s/%s: %s", e.reason(), job.getMetadata().getNamespace(),
                        job.getMetadata().getName(), failure.getMessage());
            }
        }
    }
}
