package io.oncestream.operator.admission;

import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The webhook's certificate: made, kept and rotated by the operator itself, or read from a
 * Secret that cert-manager (or any other tool) writes.
 *
 * <p><b>Self-made</b> ({@code certificates=self}): the Secret holds a CA ({@code ca.key} and the
 * CA bundle {@code ca.crt}) and the serving certificate it signed ({@code tls.crt},
 * {@code tls.key}). When a third of the validity is left, a new CA and certificate replace them.
 * The new bundle keeps the old CA until it expires, and it is published in the
 * ValidatingWebhookConfiguration's {@code caBundle} before the new certificate is served, so the
 * API server trusts the old certificate and the new one throughout. Replicas share the Secret:
 * whichever sees the need first writes it (an update with the resourceVersion it read; a replica
 * that loses the race takes the winner's), and the others serve what it holds at their next check.
 *
 * <p><b>External</b> ({@code certificates=external}): the operator never writes; it serves the
 * Secret's {@code tls.crt}/{@code tls.key}, reloaded at each check, and leaves the caBundle to
 * the tool (cert-manager's CA injector).
 */
public final class WebhookCertificates {

    private static final Logger LOG = Logger.getLogger(WebhookCertificates.class);
    static final String CA_BUNDLE = "ca.crt";
    static final String CA_KEY = "ca.key";
    static final String TLS_CRT = "tls.crt";
    static final String TLS_KEY = "tls.key";
    /** How long the API server gets to see a new caBundle before a certificate from a new CA is served. */
    static final Duration PUBLISH_GRACE = Duration.ofSeconds(3);

    private final KubernetesClient client;
    private final String namespace;
    private final String secretName;
    private final String serviceName;
    private final String configurationName;
    private final Duration validity;
    private final boolean selfMade;
    private final ServingKeys keys;

    public WebhookCertificates(KubernetesClient client, String namespace, String secretName, String serviceName,
            String configurationName, Duration validity, boolean selfMade, ServingKeys keys) {
        this.client = client;
        this.namespace = namespace;
        this.secretName = secretName;
        this.serviceName = serviceName;
        this.configurationName = configurationName;
        this.validity = validity;
        this.selfMade = selfMade;
        this.keys = keys;
    }

    /** How often the certificate is looked at: a tenth of its validity, at most a minute. */
    public Duration checkPeriod() {
        return Certificates.tenthUpToAMinute(validity);
    }

    /**
     * Brings the served certificate, the Secret and (self-made) the caBundle up to date; the
     * periodic check.
     */
    public void check() {
        Secret secret = client.secrets().inNamespace(namespace).withName(secretName).get();
        if (!selfMade) {
            serveExternal(secret);
            return;
        }
        Material held = secret == null ? null : Material.read(secret, namespace + "/" + secretName);
        Instant now = Instant.now();
        Material material = held;
        if (held == null || renewalDue(held.ca(), now) || renewalDue(held.serving(), now) || outlives(held.serving(), now)
                || !names(held.serving().certificate()).contains(serviceName + "." + namespace + ".svc")) {
            material = renewed(held, now);
            Secret written = write(secret, material);
            if (written != null && !isOurs(written, material)) {
                material = Material.read(written, namespace + "/" + secretName); // another replica won the race
            }
        }
        boolean published = publishCaBundle(material.bundlePem());
        X509Certificate serving = keys.certificate();
        if (serving == null || !serving.equals(material.serving().certificate())) {
            if (published) {
                sleep(PUBLISH_GRACE); // the API server sees the new bundle before anything it signed is served
            }
            LOG.infof("webhook: serving the certificate valid until %s (CA bundle of %d)", material.serving().notAfter(),
                    material.bundle().size());
        }
        keys.use(material.serving());
    }

    private void serveExternal(Secret secret) {
        if (secret == null || secret.getData() == null || secret.getData().get(TLS_CRT) == null) {
            LOG.warnf("webhook: waiting for the Secret %s/%s (%s and %s) that certificates=external expects"
                    + " (cert-manager's Certificate writes it)", namespace, secretName, TLS_CRT, TLS_KEY);
            return;
        }
        String what = "Secret " + namespace + "/" + secretName;
        List<X509Certificate> chain = Certificates.certificates(decode(secret, TLS_CRT), what + " " + TLS_CRT);
        keys.use(new Certificates.Issued(chain.get(0), Certificates.privateKey(decode(secret, TLS_KEY), what + " " + TLS_KEY)));
    }

    /** A certificate is renewed when a third of its validity is left. */
    static boolean renewalDue(Certificates.Issued issued, Instant now) {
        Duration life = Duration.between(issued.notBefore(), issued.notAfter());
        return now.isAfter(issued.notAfter().minus(life.dividedBy(3)));
    }

    /** Made for a longer validity than the one set now (the setting was shortened): replaced at once. */
    private boolean outlives(Certificates.Issued issued, Instant now) {
        return issued.notAfter().isAfter(now.plus(validity).plus(Duration.ofMinutes(1)));
    }

    private Material renewed(Material held, Instant now) {
        Certificates.Issued ca = Certificates.ca("oncestream-webhook-ca", validity);
        Certificates.Issued serving = Certificates.serving(ca, Certificates.serviceNames(serviceName, namespace), validity);
        List<X509Certificate> bundle = new ArrayList<>(List.of(ca.certificate()));
        if (held != null) {
            held.bundle().stream().filter(c -> c.getNotAfter().toInstant().isAfter(now)).forEach(bundle::add);
        }
        LOG.infof("webhook: made a new CA and serving certificate for %s.%s.svc, valid until %s", serviceName, namespace,
                serving.notAfter());
        return new Material(ca, serving, bundle);
    }

    /** Creates or updates the Secret; on a conflict, the Secret another replica wrote. */
    private Secret write(Secret current, Material material) {
        Map<String, String> data = new LinkedHashMap<>();
        data.put(CA_BUNDLE, encode(material.bundlePem()));
        data.put(CA_KEY, encode(Certificates.pem(material.ca().key())));
        data.put(TLS_CRT, encode(Certificates.pem(material.serving().certificate())));
        data.put(TLS_KEY, encode(Certificates.pem(material.serving().key())));
        try {
            if (current == null) {
                return client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata()
                        .withName(secretName).withNamespace(namespace)
                        .addToLabels("app.kubernetes.io/part-of", "oncestream")
                        .addToLabels("app.kubernetes.io/component", "webhook").endMetadata()
                        .withType("kubernetes.io/tls").withData(data).build()).create();
            }
            Secret updated = new SecretBuilder(current).withData(data).build(); // carries the resourceVersion read
            return client.secrets().inNamespace(namespace).resource(updated).update();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            LOG.infof("webhook: another replica wrote the Secret %s/%s first; serving its certificate", namespace, secretName);
            return client.secrets().inNamespace(namespace).withName(secretName).get();
        }
    }

    private static boolean isOurs(Secret written, Material material) {
        return Objects.equals(written.getData().get(TLS_CRT), encode(Certificates.pem(material.serving().certificate())));
    }

    /**
     * Sets every webhook's caBundle of the configuration to {@code bundlePem}; true if it changed.
     * Another replica may patch it at the same moment (a conflict): read again and retry.
     */
    private boolean publishCaBundle(String bundlePem) {
        String encoded = encode(bundlePem);
        var resource = client.admissionRegistration().v1().validatingWebhookConfigurations().withName(configurationName);
        for (int attempt = 1;; attempt++) {
            ValidatingWebhookConfiguration configuration = resource.get();
            if (configuration == null) {
                LOG.warnf("webhook: no ValidatingWebhookConfiguration %s to publish the CA in (is the webhook registered?)",
                        configurationName);
                return false;
            }
            boolean current = configuration.getWebhooks().stream()
                    .allMatch(w -> w.getClientConfig() != null && encoded.equals(w.getClientConfig().getCaBundle()));
            if (current) {
                return false;
            }
            for (ValidatingWebhook webhook : configuration.getWebhooks()) {
                webhook.getClientConfig().setCaBundle(encoded);
            }
            try {
                resource.patch(configuration); // a JSON patch with the resourceVersion read above
                LOG.infof("webhook: published a CA bundle of %d certificates in %s",
                        Certificates.certificates(bundlePem, "bundle").size(), configurationName);
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private static Collection<String> names(X509Certificate certificate) {
        try {
            Collection<List<?>> sans = certificate.getSubjectAlternativeNames();
            List<String> names = new ArrayList<>();
            if (sans != null) {
                sans.forEach(san -> names.add(String.valueOf(san.get(1))));
            }
            return names;
        } catch (java.security.cert.CertificateParsingException e) {
            return List.of();
        }
    }

    private static String encode(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(Secret secret, String key) {
        return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What the Secret holds: the CA, the serving certificate, and the CA bundle (newest first). */
    record Material(Certificates.Issued ca, Certificates.Issued serving, List<X509Certificate> bundle) {

        String bundlePem() {
            return Certificates.pem(bundle.toArray());
        }

        /** The Secret's material, or null (logged, naming the Secret and key) when a key is missing or unreadable: it is then made anew. */
        static Material read(Secret secret, String what) {
            try {
                Map<String, String> data = secret.getData() == null ? Map.of() : secret.getData();
                for (String key : List.of(CA_BUNDLE, CA_KEY, TLS_CRT, TLS_KEY)) {
                    if (data.get(key) == null) {
                        throw new IllegalArgumentException("Secret " + what + " has no " + key);
                    }
                }
                List<X509Certificate> bundle = Certificates.certificates(decode(secret, CA_BUNDLE), "Secret " + what + " " + CA_BUNDLE);
                Certificates.Issued ca = new Certificates.Issued(bundle.get(0),
                        Certificates.privateKey(decode(secret, CA_KEY), "Secret " + what + " " + CA_KEY));
                Certificates.Issued serving = new Certificates.Issued(
                        Certificates.certificates(decode(secret, TLS_CRT), "Secret " + what + " " + TLS_CRT).get(0),
                        Certificates.privateKey(decode(secret, TLS_KEY), "Secret " + what + " " + TLS_KEY));
                return new Material(ca, serving, bundle);
            } catch (IllegalArgumentException e) {
                LOG.warnf("webhook: %s; making a new CA and certificate", e.getMessage());
                return null;
            }
        }
    }
}
