package io.oncestream.operator.admission;

import java.util.Objects;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.oncestream.api.StreamJob;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.model.SpecValidator;

/**
 * The admission webhook's answer to one review of a StreamJob: the reconciler's own checks
 * ({@link SpecValidator}), run before the object is stored. A CREATE is judged on its spec; an
 * UPDATE only when its spec changed (a label, a finalizer or a deletion is never refused, even
 * for a job stored before the webhook existed), and then also against the configuration its
 * workers run, as the reconciler compares it.
 */
public final class StreamJobAdmission {

    /** What the workers of a job run now: its applied configuration (null if none) and whether it has checkpoints. */
    public record Applied(JobConfig config, boolean checkpoints) {
        public static final Applied NONE = new Applied(null, false);
    }

    /** Reads a job's applied configuration from the cluster; called only for an UPDATE whose spec changed. */
    @FunctionalInterface
    public interface AppliedLookup {
        Applied of(String namespace, String name);
    }

    private final AppliedLookup applied;

    public StreamJobAdmission(AppliedLookup applied) {
        this.applied = applied;
    }

    /** The review with its response; the request's uid is echoed as the API server requires. */
    public AdmissionReview review(AdmissionReview review) {
        AdmissionRequest request = review.getRequest();
        AdmissionResponse response;
        if (request == null) {
            response = new AdmissionResponseBuilder().withAllowed(false)
                    .withStatus(new StatusBuilder().withCode(400).withMessage("the AdmissionReview has no request").build())
                    .build();
        } else {
            Optional<String> refusal = refusal(request);
            response = refusal.isEmpty()
                    ? new AdmissionResponseBuilder().withUid(request.getUid()).withAllowed(true).build()
                    : new AdmissionResponseBuilder().withUid(request.getUid()).withAllowed(false)
                            .withStatus(new StatusBuilder().withStatus("Failure").withCode(422).withReason("Invalid")
                                    .withMessage(refusal.get()).build())
                            .build();
        }
        AdmissionReview answer = new AdmissionReview();
        answer.setApiVersion("admission.k8s.io/v1");
        answer.setKind("AdmissionReview");
        answer.setResponse(response);
        return answer;
    }

    /** Why the request must be refused, or empty. */
    Optional<String> refusal(AdmissionRequest request) {
        if (!"CREATE".equals(request.getOperation()) && !"UPDATE".equals(request.getOperation())) {
            return Optional.empty(); // registered for CREATE and UPDATE only; anything else is not ours to judge
        }
        StreamJob job = Serialization.jsonMapper().convertValue(request.getObject(), StreamJob.class);
        if (job == null || job.getSpec() == null) {
            return Optional.of("spec: Required value: a StreamJob needs a spec (source, sink and columns)");
        }
        StreamJob old = request.getOldObject() == null ? null : Serialization.jsonMapper().convertValue(request.getOldObject(), StreamJob.class);
        if (old != null && (job.getMetadata().getDeletionTimestamp() != null || Objects.equals(
                Serialization.asJson(old.getSpec()), Serialization.asJson(job.getSpec())))) {
            return Optional.empty(); // metadata only, or a job on its way out
        }
        JobConfig desired;
        try {
            desired = SpecValidator.check(job);
        } catch (InvalidConfigException e) {
            return Optional.of(e.getMessage());
        }
        if (old == null) {
            return Optional.empty();
        }
        Applied running = applied.of(job.getMetadata().getNamespace(), job.getMetadata().getName());
        if (running.config() == null) {
            return Optional.empty();
        }
        if (job.getSpec().autoscaling != null) {
            // The autoscaler chooses the number of workers, not the spec: only topics and table are judged.
            desired = desired.withParallelism(running.config().parallelism());
        }
        return SpecValidator.refusal(job, desired, running.config(), running.checkpoints());
    }
}
