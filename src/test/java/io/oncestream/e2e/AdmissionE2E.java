package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.Command;
import io.oncestream.testing.LocalService;

/**
 * The admission webhook as the chart installs it, called by the real API server: every invalid
 * StreamJob is refused at {@code kubectl apply} with the field named (and the same with
 * {@code --dry-run=server}), the examples are accepted, a change the checkpoints cannot follow is
 * refused on a running job, the operator's self-made certificate rotates under load without a
 * restart, and with the operator down each failure policy behaves as docs/operator.md says.
 *
 * <p>The certificates are made valid for 60 s for this class, so they rotate about every 45 s
 * throughout it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AdmissionE2E extends E2ETest {

    static final String VALIDITY = "60s";

    /** A refused manifest: the edits of the example (old text → new text) and what the refusal must say. */
    record Refusal(String name, Map<String, String> edits, String says) {
    }

    @BeforeAll
    static void shortLivedCertificates() {
        operator.upgrade(Map.of("webhook.certificates.validity", VALIDITY), E2ESettings.WAIT);
    }

    static List<Refusal> refusals() {
        List<Refusal> r = new ArrayList<>();
        String filter = "filter: \"value.status == 'PAID' && value.amount > 100.0\"";
        r.add(new Refusal("CEL syntax", Map.of(filter, "filter: \"value.amount >\""), "spec.filter: CEL expression does not compile"));
        r.add(new Refusal("unknown variable", Map.of(filter, "filter: \"valu.amount > 100.0\""), "undeclared reference to 'valu'"));
        r.add(new Refusal("non-boolean filter", Map.of(filter, "filter: \"value.amount + 1.0\""), "expected type 'bool'"));
        r.add(new Refusal("unknown function", Map.of(filter, "filter: \"frobnicate(value.amount)\""),
                "undeclared reference to 'frobnicate'"));
        r.add(new Refusal("type mismatch", Map.of(filter, "filter: \"1 + 'a' == 2\""), "spec.filter: CEL expression does not compile"
                + ": ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'"));
        r.add(new Refusal("column syntax", Map.of("amount: value.amount", "amount: value.amount *"),
                "spec.sink.cassandra.columns.amount: CEL expression does not compile"));
        r.add(new Refusal("column of an unknown variable", Map.of("customer: value.customer.name", "customer: customer.name"),
                "spec.sink.cassandra.columns.customer: CEL expression does not compile"));
        r.add(new Refusal("column name not a CQL identifier", Map.of("order_id: value.id", "order-id: value.id"),
                "spec.sink.cassandra.columns.order-id: 'order-id' is not a CQL identifier"));
        r.add(new Refusal("empty column expression", Map.of("order_id: value.id", "order_id: value.id\n        note: \"\""),
                "spec.sink.cassandra.columns.note"));
        r.add(new Refusal("contact point without a port", Map.of("contactPoints: [\"cassandra:9042\"]", "contactPoints: [\"cassandra\"]"),
                "spec.sink.cassandra.contactPoints[0]"));
        r.add(new Refusal("topic name with a space", Map.of("topics: [orders]", "topics: [\"my orders\"]"), "spec.source.kafka.topics"));
        r.add(new Refusal("trigger interval not a duration", Map.of("interval: 1s", "interval: 1 minute"), "spec.trigger.interval"));
        r.add(new Refusal("name starting with a digit", Map.of("name: paid-orders", "name: 2024-orders-backfill"),
                "metadata.name must"));
        r.add(new Refusal("name too long for its worker objects", Map.of("name: paid-orders", "name: " + "a".repeat(53)),
                "metadata.name must have at most 52"));
        r.add(new Refusal("parallelism 0", Map.of("parallelism: 2", "parallelism: 0"), "spec.parallelism"));
        r.add(new Refusal("unknown consistency level", Map.of("consistency: LOCAL_QUORUM", "consistency: MOST"),
                "spec.sink.cassandra.consistency"));
        return r;
    }

    @Test
    @Order(1)
    void everyInvalidSpecIsRefusedAtApplyNamingTheFieldAndTheExamplesPass() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "admission", 2, 100);
        int refused = 0;
        for (Refusal refusal : refusals()) {
            String manifest = job.manifest(refusal.edits());
            Command.Result applied = kube.kubectl(manifest, "apply", "-n", job.namespace, "-f", "-");
            Command.Result dryRun = kube.kubectl(manifest, "apply", "--dry-run=server", "-n", job.namespace, "-f", "-");
            System.out.println("[e2e] admission: " + refusal.name() + " → exit " + applied.exitCode() + ": "
                    + applied.stderr().strip().lines().findFirst().orElse(""));
            assertThat(applied.exitCode()).as(refusal.name()).isEqualTo(1);
            assertThat(applied.stderr()).as(refusal.name()).contains(refusal.says());
            assertThat(dryRun.exitCode()).as(refusal.name() + " (server dry-run)").isEqualTo(1);
            assertThat(dryRun.stderr()).as(refusal.name() + " (server dry-run)").contains(refusal.says());
            refused++;
        }
        assertThat(kube.admin().resources(io.oncestream.api.StreamJob.class).inNamespace(job.namespace).list().getItems())
                .as("nothing refused was stored").isEmpty();
        System.out.println("[e2e] admission: " + refused + " invalid manifests refused by kubectl apply, each naming its field");

        for (String example : List.of("paid-orders.yaml", "orders-backfill.yaml", "shipments-nested.yaml")) {
            String file = LocalService.repoDir().resolve("deploy/examples").resolve(example).toString();
            Command.Result accepted = kube.kubectl(null, "apply", "--dry-run=server", "-n", job.namespace, "-f", file);
            assertThat(accepted.exitCode()).as(example + ": " + accepted.stderr()).isZero();
        }
    }

    @Test
    @Order(2)
    void aChangeTheCheckpointsCannotFollowIsRefusedOnARunningJob() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "admission-change", 2, 100);
        job.apply(Map.of());
        job.produce(300);
        job.awaitExactTable(E2ESettings.WAIT);
        Command.Result topics = kube.kubectl(job.manifest(Map.of("topics: [orders]", "topics: [" + job.topic + "-v2]")),
                "apply", "-n", job.namespace, "-f", "-");
        System.out.println("[e2e] admission: topics changed → exit " + topics.exitCode() + ": " + topics.stderr().strip());
        assertThat(topics.exitCode()).isEqualTo(1);
        assertThat(topics.stderr()).contains("spec.source.kafka.topics changed from [" + job.topic + "] to [" + job.topic + "-v2]");
        Command.Result table = kube.kubectl(job.manifest(Map.of("table: paid_orders", "table: paid_orders_v2")), "apply", "-n",
                job.namespace, "-f", "-");
        assertThat(table.exitCode()).isEqualTo(1);
        assertThat(table.stderr()).contains("keyspace.table changed from " + job.keyspace + ".paid_orders to " + job.keyspace
                + ".paid_orders_v2");
        Command.Result suspendedRescale = kube.kubectl(job.manifest(Map.of("parallelism: 2", "parallelism: 3\n  suspend: true")),
                "apply", "-n", job.namespace, "-f", "-");
        assertThat(suspendedRescale.exitCode()).isEqualTo(1);
        assertThat(suspendedRescale.stderr()).contains("spec.parallelism changed from 2 to 3 while spec.suspend is true");
        // What the webhook let through, the job still runs as before; a valid change of the filter applies.
        assertThat(job.job().getSpec().source.kafka.topics).containsExactly(job.topic);
        job.apply(Map.of("value.amount > 100.0", "value.amount > 50.0"));
        assertThat(job.job().getSpec().filter).contains("50.0");
    }

    @Test
    @Order(3)
    void theCertificateRotatesWhileTheOperatorServesWithoutARestart() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "admission-rotation", 1, 10);
        String pod = operator.pod().getMetadata().getName();
        int restarts = operator.restarts();
        Set<BigInteger> served = new LinkedHashSet<>();
        Set<String> bundles = new LinkedHashSet<>();
        String valid = job.manifest(Map.of());
        String invalid = job.manifest(Map.of("amount: value.amount", "amount: value.amount *"));
        int answered = 0;
        Instant end = Instant.now().plus(Duration.ofSeconds(150)); // three rotations or more at 60 s validity (renewed with a third left, checked every 6 s)
        while (Instant.now().isBefore(end)) {
            served.add(servedCertificate().getSerialNumber());
            bundles.add(caBundle());
            Command.Result ok = kube.kubectl(valid, "apply", "--dry-run=server", "-n", job.namespace, "-f", "-");
            assertThat(ok.exitCode()).as("a valid apply at " + Instant.now() + ": " + ok.stderr()).isZero();
            Command.Result no = kube.kubectl(invalid, "apply", "--dry-run=server", "-n", job.namespace, "-f", "-");
            assertThat(no.exitCode()).isEqualTo(1);
            assertThat(no.stderr()).as("refused by the webhook, not by a TLS failure").contains("denied the request")
                    .contains("spec.sink.cassandra.columns.amount");
            answered += 2;
        }
        System.out.printf("[e2e] admission: %d applies answered over 150 s; %d serving certificates, %d CA bundles, "
                + "operator restarts %d → %d%n", answered, served.size(), bundles.size(), restarts, operator.restarts());
        assertThat(served).as("serving certificates seen").hasSizeGreaterThanOrEqualTo(3);
        assertThat(bundles).as("caBundles published").hasSizeGreaterThanOrEqualTo(3);
        assertThat(operator.pod().getMetadata().getName()).isEqualTo(pod);
        assertThat(operator.restarts()).isEqualTo(restarts);
        // Each rotation updated the Secret and patched the caBundle with the chart's least-privilege RBAC.
        var audit = kube.auditLog();
        assertThat(audit.since(0, r -> r.user().equals(operator.user()) && r.code() == 403)).as("calls the chart's RBAC refused")
                .isEmpty();
        assertThat(audit.since(0, r -> r.user().equals(operator.user()) && "patch".equals(r.verb())
                && r.uri().contains("validatingwebhookconfigurations"))).as("caBundle patches").hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    @Order(4)
    void withTheOperatorDownFailRefusesAndIgnoreLetsTheReconcilerReport() {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "admission-down", 1, 10);
        String broken = job.manifest(Map.of("value.amount > 100.0", "value.amount >"));
        try {
            scaleOperator(0);
            Command.Result refused = kube.kubectl(job.manifest(Map.of()), "apply", "-n", job.namespace, "-f", "-");
            System.out.println("[e2e] admission: operator down, failurePolicy Fail → exit " + refused.exitCode() + ": "
                    + refused.stderr().strip());
            assertThat(refused.exitCode()).isEqualTo(1);
            assertThat(refused.stderr()).contains("failed calling webhook");
        } finally {
            scaleOperator(1);
        }
        operator.upgrade(Map.of("webhook.failurePolicy", "Ignore"), E2ESettings.WAIT);
        // The upgrade kept the published caBundle: with Ignore, a refusal proves the webhook was called.
        Awaits.until(Duration.ofSeconds(60), "the webhook to answer after the upgrade", () ->
                kube.kubectl(broken, "apply", "--dry-run=server", "-n", job.namespace, "-f", "-").stderr().contains("denied the request"));
        try {
            scaleOperator(0);
            Command.Result stored = kube.kubectl(broken, "apply", "-n", job.namespace, "-f", "-");
            System.out.println("[e2e] admission: operator down, failurePolicy Ignore → exit " + stored.exitCode());
            assertThat(stored.exitCode()).as(stored.stderr()).isZero();
        } finally {
            scaleOperator(1);
        }
        var status = job.awaitStatus("ConfigValid=False naming spec.filter", E2ESettings.WAIT, s -> s != null
                && s.condition(ConditionType.ConfigValid).map(c -> "False".equals(c.status) && c.message.startsWith("spec.filter:"))
                        .orElse(false));
        assertThat(status.phase).isEqualTo(Phase.Failed);
        operator.upgrade(Map.of("webhook.failurePolicy", "Fail"), E2ESettings.WAIT);
    }

    private static void scaleOperator(int replicas) {
        var deployments = kube.admin().apps().deployments().inNamespace(operator.namespace());
        String name = deployments.withLabel("app.kubernetes.io/component", "operator").list().getItems().get(0).getMetadata().getName();
        deployments.withName(name).scale(replicas);
        if (replicas == 0) {
            Awaits.until(E2ESettings.WAIT, "no operator pod", () -> kube.admin().pods().inNamespace(operator.namespace())
                    .withLabel("app.kubernetes.io/component", "operator").list().getItems().isEmpty());
        } else {
            Awaits.until(E2ESettings.WAIT, "an operator pod", () -> kube.admin().pods().inNamespace(operator.namespace())
                    .withLabel("app.kubernetes.io/component", "operator").list().getItems().size() == 1);
            operator.awaitReady(E2ESettings.WAIT);
        }
    }

    private static String caBundle() {
        ValidatingWebhookConfiguration configuration = kube.admin().admissionRegistration().v1().validatingWebhookConfigurations()
                .withLabel("app.kubernetes.io/instance", "e2e").list().getItems().get(0);
        return configuration.getWebhooks().get(0).getClientConfig().getCaBundle();
    }

    /** The certificate the operator pod serves on its webhook port now (read over TLS, not trusted). */
    private static X509Certificate servedCertificate() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress(operator.pod().getStatus().getPodIP(), 9443), 5000);
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }
}
