package io.oncestream.packaging;

import static io.oncestream.testing.GeneratedManifests.objects;
import static io.oncestream.testing.GeneratedManifests.only;
import static io.oncestream.testing.GeneratedManifests.rules;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.oncestream.testing.Command;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalService;

/**
 * The chart as Helm and the real API server see it: it lints strictly, renders with the
 * default values and with every option switched on, every rendered object is accepted by the
 * API server (server-side dry-run), wrong values fail naming the value, its RBAC is the
 * committed least-privilege RBAC, and deploy/operator/operator.yaml is its rendering.
 */
@ExtendWith(KubeExtension.class)
class HelmChartIT {

    private static final Path REPO = LocalService.repoDir();
    private static final String CHART = REPO.resolve("helm/oncestream").toString();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private static KubeCluster kube;
    private static String nonDefaultValues;
    private static String watchA;
    private static String watchB;

    @BeforeAll
    static void namespaces(KubeCluster cluster) throws IOException {
        kube = cluster;
        watchA = kube.createNamespace("chart-watch-a");
        watchB = kube.createNamespace("chart-watch-b");
        Path values = REPO.resolve("target/helm-non-default-values.yaml");
        Files.writeString(values, Files.readString(REPO.resolve("src/test/resources/helm/non-default-values.yaml"))
                .replace("WATCH_A", watchA).replace("WATCH_B", watchB));
        nonDefaultValues = values.toString();
    }

    @Test
    void lintsStrictlyWithDefaultAndNonDefaultValues() {
        assertThat(kube.helm("lint", "--strict", CHART).orThrow().stdout()).contains("1 chart(s) linted, 0 chart(s) failed");
        assertThat(kube.helm("lint", "--strict", CHART, "-f", nonDefaultValues).orThrow().stdout())
                .contains("1 chart(s) linted, 0 chart(s) failed");
    }

    @Test
    void everyRenderedObjectIsAcceptedByTheApiServer() throws IOException {
        String ns = kube.createNamespace("chart-dry-run");
        List<JsonNode> defaults = objects(kube.helm("template", "dry", CHART, "-n", ns, "--include-crds").orThrow().stdout());
        assertThat(kinds(defaults)).containsExactlyInAnyOrder("CustomResourceDefinition", "ServiceAccount", "ConfigMap",
                "ClusterRole", "ClusterRoleBinding", "Service", "Deployment",
                "Service", "ValidatingWebhookConfiguration", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding");
        dryRun(defaults);
        JsonNode webhook = only(defaults, "ValidatingWebhookConfiguration").at("/webhooks/0");
        assertThat(webhook.at("/failurePolicy").asText()).isEqualTo("Fail");
        assertThat(webhook.at("/sideEffects").asText()).as("kubectl apply --dry-run=server calls it").isEqualTo("None");
        assertThat(webhook.at("/rules/0/operations").toString()).isEqualTo("[\"CREATE\",\"UPDATE\"]");
        assertThat(webhook.at("/namespaceSelector/matchExpressions/0/values").toString())
                .as("never the operator's own namespace or kube-system").isEqualTo("[\"kube-system\",\"" + ns + "\"]");
        assertThat(webhook.at("/clientConfig/service/name").asText()).isEqualTo("dry-operator-webhook");
        assertThat(webhook.at("/clientConfig/caBundle").isMissingNode()).as("the operator publishes its own CA").isTrue();

        List<JsonNode> all = objects(kube.helm("template", "dry", CHART, "-n", ns, "-f", nonDefaultValues).orThrow().stdout());
        assertThat(kinds(all)).containsExactlyInAnyOrder("ServiceAccount", "ConfigMap", "Role", "RoleBinding", "Role",
                "RoleBinding", "Role", "RoleBinding", "Service", "Deployment", "PodDisruptionBudget", "ServiceMonitor",
                "Service", "ValidatingWebhookConfiguration", "Certificate", "Role", "RoleBinding");
        // cert-manager's Certificate: its CRD is not installed here either; its CA injector sets the caBundle.
        JsonNode certificate = only(all, "Certificate");
        assertThat(certificate.at("/spec/secretName").asText()).isEqualTo("streams-webhook-tls");
        assertThat(certificate.at("/spec/dnsNames/0").asText()).isEqualTo("streams-webhook." + ns + ".svc");
        assertThat(certificate.at("/spec/issuerRef/name").asText()).isEqualTo("corp-ca");
        JsonNode injected = only(all, "ValidatingWebhookConfiguration");
        assertThat(injected.at("/metadata/annotations/cert-manager.io~1inject-ca-from").asText()).isEqualTo(ns + "/streams-webhook");
        assertThat(injected.at("/webhooks/0/failurePolicy").asText()).isEqualTo("Ignore");
        assertThat(injected.at("/webhooks/0/namespaceSelector/matchExpressions/1/values").toString())
                .isEqualTo("[\"" + watchA + "\",\"" + watchB + "\"]");
        // The ServiceMonitor's CRD (Prometheus Operator) is not installed here: checked by content.
        JsonNode monitor = all.stream().filter(o -> o.path("kind").asText().equals("ServiceMonitor")).findFirst().orElseThrow();
        assertThat(monitor.at("/spec/endpoints/0/path").asText()).isEqualTo("/q/metrics");
        assertThat(monitor.at("/metadata/labels/release").asText()).isEqualTo("prometheus");
        dryRun(all.stream().filter(o -> !Set.of("ServiceMonitor", "Certificate").contains(o.path("kind").asText())).toList());

        JsonNode deployment = all.stream().filter(o -> o.path("kind").asText().equals("Deployment")).findFirst().orElseThrow();
        assertThat(deployment.at("/spec/replicas").asInt()).isEqualTo(3);
        assertThat(deployment.at("/spec/strategy").isMissingNode()).as("replicas elect a leader: rolling updates").isTrue();
        assertThat(deployment.at("/spec/template/spec/containers/0/image").asText()).isEqualTo("registry.example.com/data/oncestream:9.9.9");
        String settings = all.stream().filter(o -> o.path("kind").asText().equals("ConfigMap")).findFirst().orElseThrow()
                .at("/data/application.properties").asText();
        assertThat(settings).contains("oncestream.operator.leader-election.enabled=true",
                "quarkus.operator-sdk.controllers.streamjob.namespaces=" + watchA + "," + watchB,
                "oncestream.operator.worker-image=registry.example.com/data/oncestream-worker:9.9.9",
                "oncestream.operator.poll-interval=10s", "oncestream.operator.webhook.certificates=external",
                "oncestream.operator.webhook.port=9444", "oncestream.operator.webhook.secret-name=streams-webhook-tls");
    }

    @Test
    void theSettingsHashIsAStringEvenWhenItIsAllDigits() throws IOException {
        // Release "e2e" in this namespace with these settings hashes to digits only: unquoted, YAML
        // reads a number, which the API server refuses as an annotation ("cannot unmarshal number").
        List<JsonNode> objects = objects(kube.helm("template", "e2e", CHART, "-n", "e2e-system-81950cee",
                "--set", "operator.pollTimeout=1s", "--set", "operator.pollInterval=2s").orThrow().stdout());
        JsonNode hash = only(objects, "Deployment").at("/spec/template/metadata/annotations/oncestream.io~1settings-hash");
        assertThat(hash.asText()).isEqualTo("7011919901861892");
        assertThat(hash.isTextual()).as("the annotation is a string, not " + hash.getNodeType()).isTrue();
    }

    @Test
    void theOperatorRunsAsRestrictedAsItsWorkers() throws IOException {
        JsonNode pod = objects(kube.helm("template", "x", CHART).orThrow().stdout()).stream()
                .filter(o -> o.path("kind").asText().equals("Deployment")).findFirst().orElseThrow().at("/spec/template/spec");
        assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
        assertThat(pod.at("/enableServiceLinks").asBoolean(true)).as("no Service variables that Quarkus would read as settings")
                .isFalse();
        assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
        JsonNode container = pod.at("/containers/0");
        assertThat(container.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
        assertThat(container.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
        assertThat(container.at("/securityContext/capabilities/drop/0").asText()).isEqualTo("ALL");
        assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/q/health/ready");
        assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/q/health/live");
        assertThat(container.at("/startupProbe/httpGet/path").asText()).isEqualTo("/q/health/started");
    }

    @Test
    void wrongValuesFailNamingTheValue() {
        Map<String, String> wrong = Map.of(
                "replicas=2", "additional properties 'replicas' not allowed",
                "operator.pollInterval=fast", "/operator/pollInterval",
                "image.pullPolicy=Sometimes", "/image/pullPolicy",
                "leaderElection.enabled=maybe", "/leaderElection/enabled",
                "watchNamespaces[0]=Not_A_Namespace", "/watchNamespaces/0",
                "webhook.failurePolicy=Sometimes", "/webhook/failurePolicy",
                "webhook.certificates.source=vault", "/webhook/certificates/source",
                "metrics.service.port=70000", "/metrics/service/port");
        wrong.forEach((value, message) -> {
            Command.Result result = kube.helm("template", "x", CHART, "--set", value);
            assertThat(result.exitCode()).as(value).isNotZero();
            assertThat(result.stderr()).as(value).contains(message);
        });
    }

    @Test
    void theChartsRbacIsTheCommittedLeastPrivilegeRbac() throws IOException {
        List<JsonNode> committed = objects(Files.readString(REPO.resolve("deploy/operator/rbac.yaml")));
        List<JsonNode> clusterWide = objects(kube.helm("template", "x", CHART, "--set", "replicaCount=2").orThrow().stdout());
        assertThat(rules(clusterWide, "ClusterRole")).isEqualTo(rules(committed, "ClusterRole"));
        assertThat(rules(clusterWide, "Role")).isEqualTo(rules(committed, "Role"));

        List<JsonNode> scoped = objects(kube.helm("template", "x", CHART, "--set", "watchNamespaces={a,b}").orThrow().stdout());
        // Watching some namespaces, the one cluster-wide right left is the caBundle of its own webhook configuration.
        assertThat(scoped.stream().filter(o -> o.path("kind").asText().equals("ClusterRole")).toList()).singleElement()
                .satisfies(role -> assertThat(role.at("/rules").toString()).isEqualTo("[{\"apiGroups\":[\"admissionregistration.k8s.io\"],"
                        + "\"resources\":[\"validatingwebhookconfigurations\"],\"resourceNames\":[\"x-operator-default\"],"
                        + "\"verbs\":[\"get\",\"patch\"]}]"));
        List<JsonNode> certManager = objects(kube.helm("template", "x", CHART, "--set", "watchNamespaces={a,b}",
                "--set", "webhook.certificates.source=certManager").orThrow().stdout());
        assertThat(kinds(certManager)).doesNotContain("ClusterRole", "ClusterRoleBinding");
        List<JsonNode> reconciling = committed.stream().filter(o -> !o.at("/metadata/name").asText().endsWith("-webhook")).toList();
        assertThat(rules(scoped.stream().filter(o -> o.at("/metadata/namespace").asText().equals("a")).toList(), "Role"))
                .isEqualTo(rules(reconciling, "ClusterRole"));
    }

    /** Runs {@code script OUT} and checks that the committed {@code file} is what it wrote; returns OUT. */
    private static Path assertCommittedRendering(String script, String file) throws IOException {
        Path rendered = REPO.resolve("target").resolve(Path.of(file).getFileName());
        Command.Result render = Command.of("bash", REPO.resolve(script).toString(), rendered.toString()).run(java.time.Duration.ofMinutes(2));
        assertThat(render.exitCode()).as(render.stderr()).isZero();
        assertThat(Files.readString(REPO.resolve(file))).as(file + " is out of date: run " + script).isEqualTo(Files.readString(rendered));
        return rendered;
    }

    @Test
    void thePlainManifestsAreTheChartsRendering() throws IOException {
        Path rendered = assertCommittedRendering("deploy/operator/render.sh", "deploy/operator/operator.yaml");
        assertCommittedRendering("deploy/monitoring/render.sh", "deploy/monitoring/oncestream-alerts.yaml");
        List<JsonNode> objects = objects(Files.readString(rendered));
        assertThat(kinds(objects)).containsExactlyInAnyOrder("Namespace", "CustomResourceDefinition", "ServiceAccount",
                "ConfigMap", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment",
                "Service", "ValidatingWebhookConfiguration", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding");
        // The CRD in it is the committed one.
        JsonNode crd = objects.stream().filter(o -> o.path("kind").asText().equals("CustomResourceDefinition")).findFirst().orElseThrow();
        assertThat(crd).isEqualTo(YAML.readTree(REPO.resolve("crds/streamjobs.oncestream.io-v1.yml").toFile()));
    }

    // -----------------------------------------------------------------------------------

    private static void dryRun(List<JsonNode> objects) throws IOException {
        StringBuilder yaml = new StringBuilder();
        for (JsonNode o : objects) {
            yaml.append("---\n").append(YAML.writeValueAsString(o).replaceFirst("^---\n", ""));
        }
        Command.Result result = kube.kubectl(yaml.toString(), "apply", "--dry-run=server", "-f", "-");
        assertThat(result.exitCode()).as("server-side dry-run: " + result.stderr()).isZero();
        assertThat(result.stdout().lines().filter(l -> l.endsWith("(server dry run)")).count()).isEqualTo(objects.size());
    }

    private static List<String> kinds(List<JsonNode> objects) {
        return objects.stream().map(o -> o.path("kind").asText()).toList();
    }
}
