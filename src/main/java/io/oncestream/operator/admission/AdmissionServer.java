package io.oncestream.operator.admission;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.OperatorConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * The validating admission webhook: {@code POST /validate-streamjobs} over HTTPS on its own port
 * ({@code oncestream.operator.webhook.port}, 9443), answered by {@link StreamJobAdmission}. Every
 * replica serves it, leader or not. The pod is ready only once it has a certificate to serve.
 */
@Singleton
@Readiness
public class AdmissionServer implements HealthCheck {

    public static final String PATH = "/validate-streamjobs";
    private static final Logger LOG = Logger.getLogger(AdmissionServer.class);
    /** An AdmissionReview holds the object and the old one, each at most the API server's 1.5 MiB. */
    private static final int MAX_BODY = 4 * 1024 * 1024;

    /** Buckets of the review-time histogram, fine around the 20 ms a review may take at p99. */
    private static final Duration[] REVIEW_BUCKETS = java.util.stream.LongStream.of(1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 50, 100, 250, 500)
            .mapToObj(Duration::ofMillis).toArray(Duration[]::new);

    private static final int WARM_UP_REVIEWS = 3000;

    private final OperatorConfig.Webhook config;
    private final KubernetesClient client;
    private final ServingKeys keys = new ServingKeys();
    private final StreamJobAdmission admission;
    private final Timer allowed;
    private final Timer refused;
    private HttpsServer server;
    private ExecutorService handlers;
    private ScheduledExecutorService checks;

    public AdmissionServer(OperatorConfig config, KubernetesClient client, MeterRegistry registry) {
        this.config = config.webhook();
        this.client = client;
        this.admission = new StreamJobAdmission(this::applied);
        this.allowed = reviewTimer(registry, "allowed");
        this.refused = reviewTimer(registry, "refused");
    }

    private static Timer reviewTimer(MeterRegistry registry, String result) {
        return Timer.builder("oncestream_operator_admission_review_duration").tag("result", result)
                .description("Time the webhook takes to answer one AdmissionReview, from its request read to its answer written")
                .serviceLevelObjectives(REVIEW_BUCKETS)
                .register(registry);
    }

    void start(@Observes StartupEvent event) throws IOException {
        if (!config.enabled()) {
            return;
        }
        String namespace = client.getNamespace();
        WebhookCertificates certificates = new WebhookCertificates(client, namespace, config.secretName(), config.serviceName(),
                config.configurationName(), config.certificateValidity(),
                config.certificates() == OperatorConfig.CertificateSource.self, keys);
        checks = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "webhook-certificates"));
        checks.scheduleWithFixedDelay(() -> {
            try {
                certificates.check();
            } catch (RuntimeException e) {
                LOG.warnf("webhook: certificate check failed (%s); trying again in %s", e.getMessage(), certificates.checkPeriod());
            }
        }, 0, certificates.checkPeriod().toMillis(), TimeUnit.MILLISECONDS);
        warmUp();
        server = HttpsServer.create(new InetSocketAddress(config.port()), 128);
        server.setHttpsConfigurator(new HttpsConfigurator(keys.sslContext()));
        handlers = Executors.newFixedThreadPool(4, r -> daemon(r, "webhook"));
        server.setExecutor(handlers);
        server.createContext(PATH, this::handle);
        server.start();
        LOG.infof("webhook: serving %s on port %d (certificates: %s, Secret %s/%s)", PATH, config.port(), config.certificates(),
                namespace, config.secretName());
    }

    /**
     * Answers a canned review (a job like deploy/examples/paid-orders.yaml, valid and with a broken filter) a
     * couple of thousand times before serving: the JIT compiles the review path now, not during
     * the first minute of real applies (whose reviews would otherwise take tens of milliseconds).
     */
    private void warmUp() throws IOException {
        String review;
        try (InputStream in = AdmissionServer.class.getResourceAsStream("/admission/warm-up-review.json")) {
            review = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String broken = review.replace("value.amount > 100.0", "valu.amount > 100.0");
        StreamJobAdmission local = new StreamJobAdmission((namespace, name) -> StreamJobAdmission.Applied.NONE);
        long start = System.nanoTime();
        for (int i = 0; i < WARM_UP_REVIEWS; i++) {
            Serialization.asJson(local.review(Serialization.unmarshal(i % 2 == 0 ? review : broken, AdmissionReview.class)));
        }
        LOG.debugf("webhook: %d warm-up reviews in %d ms", WARM_UP_REVIEWS, (System.nanoTime() - start) / 1_000_000);
    }

    void stop(@Observes ShutdownEvent event) {
        if (server != null) {
            server.stop(1);
            handlers.shutdownNow();
            checks.shutdownNow();
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        long start = System.nanoTime();
        try (exchange) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                reply(exchange, 405, "only POST of an AdmissionReview is answered here");
                return;
            }
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readNBytes(MAX_BODY + 1);
            }
            if (body.length > MAX_BODY) {
                reply(exchange, 413, "an AdmissionReview of more than " + MAX_BODY + " bytes");
                return;
            }
            AdmissionReview review;
            try {
                review = Serialization.unmarshal(new String(body, StandardCharsets.UTF_8), AdmissionReview.class);
            } catch (RuntimeException e) {
                reply(exchange, 400, "not an AdmissionReview: " + e.getMessage());
                return;
            }
            AdmissionReview answer;
            try {
                answer = admission.review(review);
            } catch (RuntimeException e) {
                // A fault of the webhook, not a verdict: the API server applies the failurePolicy.
                LOG.warnf(e, "webhook: a review failed");
                reply(exchange, 500, "the webhook could not judge this StreamJob: " + e);
                return;
            }
            byte[] json = Serialization.asJson(answer).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, json.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(json);
            }
            (Boolean.TRUE.equals(answer.getResponse().getAllowed()) ? allowed : refused)
                    .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    private static void reply(HttpExchange exchange, int code, String message) throws IOException {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(code, text.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(text);
        }
    }

    /** The configuration a job's workers run (its ConfigMap) and whether it has checkpoints (its PVCs). */
    private StreamJobAdmission.Applied applied(String namespace, String name) {
        ConfigMap map = client.configMaps().inNamespace(namespace).withName(StreamJobResources.configMapName(name)).get();
        String json = map == null || map.getData() == null ? null : map.getData().get(StreamJobResources.CONFIG_KEY);
        if (json == null) {
            return StreamJobAdmission.Applied.NONE;
        }
        boolean checkpoints = !client.persistentVolumeClaims().inNamespace(namespace)
                .withLabels(StreamJobResources.selectorLabels(name)).list().getItems().isEmpty();
        try {
            return new StreamJobAdmission.Applied(JobConfigs.parse(json), checkpoints);
        } catch (RuntimeException e) {
            return StreamJobAdmission.Applied.NONE; // the reconciler replaces a ConfigMap that does not parse
        }
    }

    @Override
    public HealthCheckResponse call() {
        boolean serving = !config.enabled() || keys.certificate() != null;
        return HealthCheckResponse.named("admission-webhook").status(serving)
                .withData("serving", config.enabled() ? (serving ? "yes" : "waiting for a certificate") : "disabled").build();
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
