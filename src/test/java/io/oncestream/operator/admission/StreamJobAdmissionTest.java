package io.oncestream.operator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.oncestream.api.StreamJob;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.TestJobs;
import io.oncestream.operator.model.SpecValidator;

/**
 * The webhook's judgement of CREATE and UPDATE reviews: each refusal names the field as
 * {@code kubectl explain} does, valid specs pass, metadata-only updates pass even for a spec
 * that would be refused, and a change the checkpoints cannot follow is refused exactly when the
 * reconciler would refuse it.
 */
class StreamJobAdmissionTest {

    /** A refused spec: what is changed in the example job, and the field the answer must name. */
    record Case(String name, Consumer<StreamJob> change, String field, String says) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Case> refusedOnCreate() {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("CEL syntax", j -> j.getSpec().filter = "value.amount >", "spec.filter", "does not compile"));
        cases.add(new Case("unknown variable", j -> j.getSpec().filter = "valu.amount > 100.0", "spec.filter", "valu"));
        cases.add(new Case("non-boolean filter", j -> j.getSpec().filter = "value.amount + 1.0", "spec.filter", "bool"));
        cases.add(new Case("unknown function", j -> j.getSpec().filter = "frobnicate(value.amount)", "spec.filter", "frobnicate"));
        cases.add(new Case("type mismatch", j -> j.getSpec().filter = "1 + 'a' == 2", "spec.filter", "overload"));
        cases.add(new Case("column syntax", j -> j.getSpec().sink.cassandra.columns.put("amount", "value.amount *"),
                "spec.sink.cassandra.columns.amount", "does not compile"));
        cases.add(new Case("column unknown variable", j -> j.getSpec().sink.cassandra.columns.put("customer", "customer.name"),
                "spec.sink.cassandra.columns.customer", "customer"));
        cases.add(new Case("bad column name", j -> j.getSpec().sink.cassandra.columns.put("order-id", "value.id"),
                "spec.sink.cassandra.columns.order-id", "identifier"));
        cases.add(new Case("empty column expression", j -> j.getSpec().sink.cassandra.columns.put("note", " "),
                "spec.sink.cassandra.columns.note", "CEL expression"));
        cases.add(new Case("bad trigger interval", j -> {
            j.getSpec().trigger = new io.oncestream.api.StreamJobSpec.Trigger();
            j.getSpec().trigger.interval = "1 minute";
        }, "spec.trigger.interval", "duration"));
        cases.add(new Case("interval longer than any duration", j -> {
            j.getSpec().trigger = new io.oncestream.api.StreamJobSpec.Trigger();
            j.getSpec().trigger.interval = "99999999999999999999s";
        }, "spec.trigger.interval", "longer than any duration can be"));
        cases.add(new Case("contact point without port", j -> j.getSpec().sink.cassandra.contactPoints = List.of("cassandra"),
                "spec.sink.cassandra.contactPoints[0]", "host:port"));
        cases.add(new Case("topic with a space", j -> j.getSpec().source.kafka.topics = List.of("my orders"),
                "spec.source.kafka.topics[0]", ""));
        return cases;
    }

    @ParameterizedTest
    @MethodSource("refusedOnCreate")
    void refusesAnInvalidSpecNamingTheField(Case c) {
        StreamJob job = TestJobs.job("");
        c.change().accept(job);
        AdmissionReview answer = admission(StreamJobAdmission.Applied.NONE).review(review("CREATE", job, null));
        assertThat(answer.getResponse().getAllowed()).as(c.name()).isFalse();
        assertThat(answer.getResponse().getUid()).isEqualTo("review-1");
        assertThat(answer.getResponse().getStatus().getCode()).isEqualTo(422);
        String message = answer.getResponse().getStatus().getMessage();
        System.out.println("[admission] " + c.name() + ": " + message);
        assertThat(message).as(c.name()).startsWith(c.field() + ": ").contains(c.says());
    }

    @Test
    void allowsTheExamplesAndAnswersInAdmissionReviewV1() {
        for (String example : List.of("paid-orders", "orders-backfill", "shipments-nested")) {
            StreamJob job = example(example);
            AdmissionReview answer = admission(StreamJobAdmission.Applied.NONE).review(review("CREATE", job, null));
            assertThat(answer.getResponse().getAllowed()).as(example + ": " + answer.getResponse().getStatus()).isTrue();
            assertThat(answer.getApiVersion()).isEqualTo("admission.k8s.io/v1");
            assertThat(answer.getKind()).isEqualTo("AdmissionReview");
        }
    }

    @Test
    void anUpdateThatLeavesTheSpecAloneIsNeverRefused() {
        StreamJob stored = TestJobs.job("");
        stored.getSpec().filter = "no such thing"; // stored before the webhook existed
        StreamJob labelled = Serialization.clone(stored);
        labelled.getMetadata().getLabels().put("team", "payments");
        assertThat(withoutLookup().review(review("UPDATE", labelled, stored)).getResponse().getAllowed()).isTrue();
        StreamJob fixed = Serialization.clone(stored);
        fixed.getSpec().filter = "value.amount > 1.0";
        assertThat(admission(StreamJobAdmission.Applied.NONE).review(review("UPDATE", fixed, stored)).getResponse().getAllowed())
                .isTrue();
    }

    @Test
    void refusesWhatTheReconcilerRefusesUnderCheckpoints() {
        StreamJob old = TestJobs.job("");
        JobConfig running = SpecValidator.check(old);

        StreamJob topics = Serialization.clone(old);
        topics.getSpec().source.kafka.topics = List.of("orders-v2");
        assertRefused(topics, old, new StreamJobAdmission.Applied(running, true), "spec.source.kafka.topics changed from [orders] to [orders-v2]");
        // Without checkpoints (no PVC yet) the reconciler applies it, and so does the webhook.
        assertThat(admission(new StreamJobAdmission.Applied(running, false)).review(review("UPDATE", topics, old))
                .getResponse().getAllowed()).isTrue();

        StreamJob table = Serialization.clone(old);
        table.getSpec().sink.cassandra.table = "paid_orders_v2";
        assertRefused(table, old, new StreamJobAdmission.Applied(running, true), "keyspace.table changed from shop.paid_orders");

        StreamJob suspendedRescale = Serialization.clone(old);
        suspendedRescale.getSpec().suspend = true;
        suspendedRescale.getSpec().parallelism = 5;
        assertRefused(suspendedRescale, old, new StreamJobAdmission.Applied(running, true), "spec.parallelism changed from 1 to 5 while spec.suspend is true");

        // The same spec as the reconciler judges it gives the same answer.
        assertThat(SpecValidator.refusal(topics, SpecValidator.check(topics), running, true)).isPresent();
        StreamJob rescale = Serialization.clone(old);
        rescale.getSpec().parallelism = 3;
        assertThat(admission(new StreamJobAdmission.Applied(running, true)).review(review("UPDATE", rescale, old))
                .getResponse().getAllowed()).as("a rescale of a running job").isTrue();
    }

    @Test
    void aNonCreateOrUpdateOperationIsAllowedAndANullRequestIsAnError() {
        StreamJob job = TestJobs.job("");
        job.getSpec().filter = "broken(";
        assertThat(withoutLookup().review(review("DELETE", job, job)).getResponse().getAllowed()).isTrue();
        AdmissionReview empty = new AdmissionReview();
        assertThat(withoutLookup().review(empty).getResponse().getAllowed()).isFalse();
    }

    private static void assertRefused(StreamJob desired, StreamJob old, StreamJobAdmission.Applied running, String says) {
        AdmissionReview answer = admission(running).review(review("UPDATE", desired, old));
        assertThat(answer.getResponse().getAllowed()).isFalse();
        System.out.println("[admission] update: " + answer.getResponse().getStatus().getMessage());
        assertThat(answer.getResponse().getStatus().getMessage()).contains(says);
    }

    private static StreamJobAdmission admission(StreamJobAdmission.Applied applied) {
        return new StreamJobAdmission((namespace, name) -> applied);
    }

    /** An admission whose lookup of the applied configuration fails the test: for reviews that must not need it. */
    private static StreamJobAdmission withoutLookup() {
        return new StreamJobAdmission((namespace, name) -> {
            throw new AssertionError("this review must not look up the applied configuration");
        });
    }

    /** A review as the API server sends it: the objects as JSON, read back untyped. */
    private static AdmissionReview review(String operation, StreamJob object, StreamJob old) {
        AdmissionRequest request = new AdmissionRequest();
        request.setUid("review-1");
        request.setOperation(operation);
        request.setObject(object);
        request.setOldObject(old);
        AdmissionReview review = new AdmissionReview();
        review.setApiVersion("admission.k8s.io/v1");
        review.setKind("AdmissionReview");
        review.setRequest(request);
        return Serialization.unmarshal(Serialization.asJson(review), AdmissionReview.class);
    }

    private static StreamJob example(String name) {
        try {
            String yaml = java.nio.file.Files.readString(io.oncestream.testing.LocalService.repoDir()
                    .resolve("deploy/examples/" + name + ".yaml"));
            String document = java.util.Arrays.stream(yaml.split("(?m)^---\\s*$"))
                    .filter(d -> d.contains("\nkind: StreamJob")).findFirst().orElseThrow();
            StreamJob job = Serialization.unmarshal(document, StreamJob.class);
            job.getMetadata().setNamespace("shop");
            return job;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
