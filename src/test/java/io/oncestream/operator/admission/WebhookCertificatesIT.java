package io.oncestream.operator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;

/**
 * The webhook's certificates against the real API server: two replicas starting together make
 * one CA and certificate between them (one wins the Secret, the other serves the winner's), the
 * caBundle of a real ValidatingWebhookConfiguration is set, a renewal (30-second validity) keeps
 * the old CA in the bundle and both replicas converge on the new certificate, a Secret that does
 * not parse is replaced, and with certificates=external the operator serves, and reloads, what
 * another tool wrote and writes nothing itself.
 */
@ExtendWith(KubeExtension.class)
class WebhookCertificatesIT {

    private static final Duration VALIDITY = Duration.ofSeconds(30);
    private static KubeCluster kube;
    private static KubernetesClient client;
    private static String namespace;
    private static String configuration;

    @BeforeAll
    static void webhookConfiguration(KubeCluster cluster) {
        kube = cluster;
        client = cluster.admin();
        namespace = cluster.createNamespace("webhook-certs");
        configuration = "certs-test-" + namespace;
        // A registration for a resource that does not exist: nothing is ever sent to it.
        client.admissionRegistration().v1().validatingWebhookConfigurations().resource(new ValidatingWebhookConfigurationBuilder()
                .withNewMetadata().withName(configuration).endMetadata()
                .addNewWebhook().withName("certs-test.oncestream.io").withAdmissionReviewVersions("v1").withSideEffects("None")
                .withFailurePolicy("Ignore")
                .withNewClientConfig().withNewService().withName("op-webhook").withNamespace(namespace).withPath("/x").withPort(443)
                .endService().endClientConfig()
                .addNewRule().withApiGroups("certs-test.oncestream.io").withApiVersions("v1").withOperations("CREATE")
                .withResources("nothing").endRule()
                .endWebhook().build()).create();
    }

    @AfterAll
    static void cleanUp() {
        client.admissionRegistration().v1().validatingWebhookConfigurations().withName(configuration).delete();
        kube.deleteNamespaces(Duration.ofSeconds(60), List.of(namespace));
    }

    private static WebhookCertificates replica(String secret, boolean selfMade, ServingKeys keys) {
        return new WebhookCertificates(client, namespace, secret, "op-webhook", configuration, VALIDITY, selfMade, keys);
    }

    @Test
    void twoReplicasShareOneCertificateAndRenewItWithTheOldCaKeptInTheBundle() throws Exception {
        ServingKeys a = new ServingKeys();
        ServingKeys b = new ServingKeys();
        WebhookCertificates first = replica("shared-tls", true, a);
        WebhookCertificates second = replica("shared-tls", true, b);
        CompletableFuture.allOf(CompletableFuture.runAsync(first::check), CompletableFuture.runAsync(second::check)).get();
        if (!a.certificate().equals(b.certificate())) {
            first.check(); // the replica that lost the race serves the winner's at its next check
            second.check();
        }
        assertThat(a.certificate()).isEqualTo(b.certificate());
        X509Certificate original = a.certificate();
        assertThat(original.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))).toList())
                .contains("op-webhook." + namespace + ".svc");
        List<X509Certificate> bundle = bundle();
        assertThat(bundle).hasSize(1);
        original.verify(bundle.get(0).getPublicKey());
        assertThat(first.checkPeriod()).isEqualTo(Duration.ofSeconds(3));

        // A third of 30 s left: renewed, the bundle holds the new CA and the old one.
        Awaits.until(Duration.ofSeconds(40), "a renewal", () -> {
            first.check();
            return !a.certificate().equals(original);
        });
        second.check();
        assertThat(b.certificate()).isEqualTo(a.certificate());
        List<X509Certificate> renewed = bundle();
        assertThat(renewed).hasSize(2);
        assertThat(renewed.get(1)).isEqualTo(bundle.get(0));
        a.certificate().verify(renewed.get(0).getPublicKey());
        System.out.printf("[webhook] replicas share %s; renewed to %s, bundle of %d%n", original.getSerialNumber().toString(16),
                a.certificate().getSerialNumber().toString(16), renewed.size());
    }

    @Test
    void aSecretThatDoesNotParseIsReplacedNamingIt() {
        client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName("broken-tls").endMetadata()
                .withType("kubernetes.io/tls").withData(Map.of("tls.crt", encode("not a certificate"), "tls.key", encode("no key")))
                .build()).create();
        ServingKeys keys = new ServingKeys();
        replica("broken-tls", true, keys).check();
        Secret repaired = client.secrets().inNamespace(namespace).withName("broken-tls").get();
        assertThat(Certificates.certificates(decode(repaired, "tls.crt"), "tls.crt").get(0)).isEqualTo(keys.certificate());
    }

    @Test
    void externalCertificatesAreServedAndReloadedAndNothingIsWritten() throws Exception {
        ServingKeys keys = new ServingKeys();
        WebhookCertificates external = replica("external-tls", false, keys);
        external.check();
        assertThat(keys.certificate()).as("nothing to serve until the Secret exists").isNull();
        assertThat(client.secrets().inNamespace(namespace).withName("external-tls").get()).as("and none is made").isNull();

        Certificates.Issued ca = Certificates.ca("their-ca", Duration.ofDays(90));
        Certificates.Issued one = Certificates.serving(ca, Certificates.serviceNames("op-webhook", namespace), Duration.ofDays(90));
        client.secrets().inNamespace(namespace).resource(tls("external-tls", one)).create();
        external.check();
        assertThat(keys.certificate()).isEqualTo(one.certificate());

        Certificates.Issued two = Certificates.serving(ca, Certificates.serviceNames("op-webhook", namespace), Duration.ofDays(90));
        client.secrets().inNamespace(namespace).resource(tls("external-tls", two)).update();
        String before = client.secrets().inNamespace(namespace).withName("external-tls").get().getMetadata().getResourceVersion();
        external.check();
        assertThat(keys.certificate()).as("renewed by the other tool: reloaded").isEqualTo(two.certificate());
        assertThat(client.secrets().inNamespace(namespace).withName("external-tls").get().getMetadata().getResourceVersion())
                .as("the operator never writes an external Secret").isEqualTo(before);
    }

    private static Secret tls(String name, Certificates.Issued issued) {
        return new SecretBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata().withType("kubernetes.io/tls")
                .withData(Map.of("tls.crt", encode(Certificates.pem(issued.certificate())), "tls.key", encode(Certificates.pem(issued.key()))))
                .build();
    }

    private static List<X509Certificate> bundle() {
        String caBundle = client.admissionRegistration().v1().validatingWebhookConfigurations().withName(configuration).get()
                .getWebhooks().get(0).getClientConfig().getCaBundle();
        return Certificates.certificates(new String(Base64.getDecoder().decode(caBundle), StandardCharsets.UTF_8), "caBundle");
    }

    private static String encode(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(Secret secret, String key) {
        return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
    }
}
