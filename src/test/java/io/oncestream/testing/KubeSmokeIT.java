package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Proves the test control plane is a real kube-apiserver with etcd and controller-manager:
 * schema validation, server-side apply, the status subresource, watches, RBAC with real
 * ServiceAccount tokens, and garbage collection by owner references.
 */
@ExtendWith(KubeExtension.class)
class KubeSmokeIT {

    private static final ResourceDefinitionContext WIDGETS = new ResourceDefinitionContext.Builder()
            .withGroup("smoke.oncestream.io").withVersion("v1").withKind("Widget").withPlural("widgets")
            .withNamespaced(true).build();

    @BeforeAll
    static void installCrd(KubeCluster kube) throws URISyntaxException {
        Path crd = Path.of(KubeSmokeIT.class.getResource("/smoke/widgets-crd.yaml").toURI());
        kube.kubectl(null, "apply", "-f", crd.toString()).orThrow();
        kube.kubectl(null, "wait", "--for=condition=Established", "--timeout=60s",
                "crd/widgets.smoke.oncestream.io").orThrow();
    }

    @Test
    void kubectlApplyRejectsObjectsThatBreakTheSchema(KubeCluster kube) {
        String ns = kube.createNamespace("smoke");

        Command.Result tooBig = kube.kubectl(widgetYaml(ns, "too-big", "{size: 20}"), "apply", "-f", "-");
        Command.Result missing = kube.kubectl(widgetYaml(ns, "no-size", "{mode: safe}"), "apply", "-f", "-");
        Command.Result badEnum = kube.kubectl(widgetYaml(ns, "bad-mode", "{size: 2, mode: turbo}"), "apply", "-f", "-");
        Command.Result breaksRule = kube.kubectl(widgetYaml(ns, "fast-big", "{size: 7, mode: fast}"), "apply", "-f", "-");
        Command.Result valid = kube.kubectl(widgetYaml(ns, "fine", "{size: 3, mode: fast}"), "apply", "-f", "-");

        assertThat(tooBig.exitCode()).isNotZero();
        assertThat(tooBig.stderr()).contains("spec.size").contains("should be less than or equal to 10");
        assertThat(missing.exitCode()).isNotZero();
        assertThat(missing.stderr()).contains("spec.size: Required value");
        assertThat(badEnum.exitCode()).isNotZero();
        assertThat(badEnum.stderr()).contains("spec.mode").contains("Unsupported value: \"turbo\"");
        assertThat(breaksRule.exitCode()).isNotZero();
        assertThat(breaksRule.stderr()).contains("a fast widget has size 5 or less");
        assertThat(valid.orThrow().stdout()).contains("widget.smoke.oncestream.io/fine created");
        assertThat(kube.admin().genericKubernetesResources(WIDGETS).inNamespace(ns).list().getItems())
                .extracting(w -> w.getMetadata().getName()).containsExactly("fine");
    }

    @Test
    void serverSideApplyStatusSubresourceAndWatch(KubeCluster kube) throws InterruptedException {
        String ns = kube.createNamespace("smoke");
        KubernetesClient client = kube.admin();
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        try (Watch ignored = client.genericKubernetesResources(WIDGETS).inNamespace(ns).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, GenericKubernetesResource resource) {
                Object status = resource.getAdditionalProperties().get("status");
                events.add(action + " " + resource.getMetadata().getName() + " status=" + status);
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        })) {
            GenericKubernetesResource applied = client.genericKubernetesResources(WIDGETS).inNamespace(ns)
                    .resource(widget(ns, "w1", 3)).fieldManager("oncestream-smoke").forceConflicts().serverSideApply();

            assertThat(applied.getMetadata().getManagedFields())
                    .extracting(ManagedFieldsEntry::getManager, ManagedFieldsEntry::getOperation)
                    .contains(org.assertj.core.groups.Tuple.tuple("oncestream-smoke", "Apply"));

            // The status subresource takes status only: the spec change in the same patch is dropped.
            client.genericKubernetesResources(WIDGETS).inNamespace(ns).withName("w1").editStatus(w -> {
                w.setAdditionalProperty("status", Map.of("phase", "Ready"));
                spec(w).put("size", 9);
                return w;
            });
            GenericKubernetesResource after = client.genericKubernetesResources(WIDGETS).inNamespace(ns).withName("w1").get();
            assertThat(after.getAdditionalProperties().get("status")).isEqualTo(Map.of("phase", "Ready"));
            assertThat(spec(after).get("size")).isEqualTo(3);

            assertThat(events.poll(30, TimeUnit.SECONDS)).isEqualTo("ADDED w1 status=null");
            assertThat(events.poll(30, TimeUnit.SECONDS)).isEqualTo("MODIFIED w1 status={phase=Ready}");
        }
    }

    @Test
    void serviceAccountWithoutPermissionIsForbidden(KubeCluster kube) {
        String ns = kube.createNamespace("smoke");
        kube.createServiceAccount(ns, "reader");
        KubernetesClient reader = kube.clientFor(ns, "reader");

        assertThatThrownBy(() -> reader.genericKubernetesResources(WIDGETS).inNamespace(ns).list())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403))
                .hasMessageContaining("system:serviceaccount:" + ns + ":reader")
                .hasMessageContaining("Forbidden");

        kube.admin().rbac().roles().inNamespace(ns).resource(new RoleBuilder().withNewMetadata().withName("widget-reader")
                .endMetadata().withRules(new PolicyRuleBuilder().withApiGroups("smoke.oncestream.io")
                        .withResources("widgets").withVerbs("get", "list").build()).build()).create();
        kube.admin().rbac().roleBindings().inNamespace(ns).resource(new RoleBindingBuilder().withNewMetadata()
                .withName("widget-reader").endMetadata().withNewRoleRef("rbac.authorization.k8s.io", "Role", "widget-reader")
                .addNewSubject().withKind("ServiceAccount").withName("reader").withNamespace(ns).endSubject().build()).create();

        // RBAC is now the only thing that changed: the same token may list, and still may not create.
        Awaits.until(Duration.ofSeconds(30), "the role binding to take effect", () -> {
            try {
                reader.genericKubernetesResources(WIDGETS).inNamespace(ns).list();
                return true;
            } catch (KubernetesClientException e) {
                return false;
            }
        });
        assertThatThrownBy(() -> reader.genericKubernetesResources(WIDGETS).inNamespace(ns).resource(widget(ns, "w", 1)).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    }

    /**
     * The audit log tells the authorizer's refusals from admission's: both answer 403, but only
     * RBAC's is logged with the decision {@code forbid} (the operator tests count those alone).
     */
    @Test
    void theAuditLogTellsRbacRefusalsFromAdmissionRefusals(KubeCluster kube) {
        String ns = kube.createNamespace("smoke");
        kube.createServiceAccount(ns, "nobody");
        KubernetesClient nobody = kube.clientFor(ns, "nobody");
        AuditLog audit = kube.auditLog();
        long mark = audit.mark();
        assertThatThrownBy(() -> nobody.configMaps().inNamespace(ns).list())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
        kube.kubectl("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-config-maps, namespace: " + ns
                + "}\nspec: {hard: {configmaps: \"0\"}}\n", "apply", "-f", "-").orThrow();
        Awaits.until(Duration.ofSeconds(30), "the quota to refuse a ConfigMap", () -> {
            try {
                kube.admin().configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("c")
                        .endMetadata().build()).create();
                kube.admin().configMaps().inNamespace(ns).withName("c").delete();
                return false;
            } catch (KubernetesClientException e) {
                return e.getCode() == 403;
            }
        });
        String user = "system:serviceaccount:" + ns + ":nobody";
        Awaits.until(Duration.ofSeconds(30), "both refusals in the audit log", () ->
                !audit.since(mark, r -> r.user().equals(user) && r.code() == 403).isEmpty()
                        && !audit.since(mark, r -> r.verb().equals("create") && "configmaps".equals(r.resource())
                                && ns.equals(r.namespace()) && r.code() == 403).isEmpty());
        assertThat(audit.since(mark, r -> r.user().equals(user) && r.code() == 403))
                .as("the service account's refused list").allMatch(AuditLog.Request::forbiddenByRbac);
        assertThat(audit.since(mark, r -> r.verb().equals("create") && "configmaps".equals(r.resource()) && ns.equals(r.namespace())
                && r.code() == 403)).as("the quota's refusal, which the authorizer allowed")
                .isNotEmpty().noneMatch(AuditLog.Request::forbiddenByRbac)
                .allMatch(r -> "allow".equals(r.authorization()));
    }

    @Test
    void controllerManagerCollectsOwnedObjects(KubeCluster kube) {
        String ns = kube.createNamespace("smoke");
        KubernetesClient client = kube.admin();
        GenericKubernetesResource owner = client.genericKubernetesResources(WIDGETS).inNamespace(ns)
                .resource(widget(ns, "owner", 2)).create();
        client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("owned")
                .addNewOwnerReference().withApiVersion("smoke.oncestream.io/v1").withKind("Widget")
                .withName("owner").withUid(owner.getMetadata().getUid()).endOwnerReference()
                .endMetadata().addToData("k", "v").build()).create();

        client.genericKubernetesResources(WIDGETS).inNamespace(ns).withName("owner").delete();

        Awaits.until(Duration.ofSeconds(60), "the garbage collector to delete the owned ConfigMap",
                () -> client.configMaps().inNamespace(ns).withName("owned").get() == null);
        // The namespace's default ServiceAccount comes from the controller-manager too.
        Awaits.until(Duration.ofSeconds(60), "the default ServiceAccount",
                () -> client.serviceAccounts().inNamespace(ns).withName("default").get() != null);
    }

    @Test
    void controllerManagerCreatesStatefulSetPods(KubeCluster kube) {
        String ns = kube.createNamespace("smoke");
        KubernetesClient client = kube.admin();
        Map<String, String> labels = Map.of("app", "smoke");
        client.apps().statefulSets().inNamespace(ns).resource(new StatefulSetBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withReplicas(2).withServiceName("web").withPodManagementPolicy("Parallel")
                .withNewSelector().withMatchLabels(labels).endSelector()
                .withNewTemplate().withNewMetadata().withLabels(labels).endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("oncestream/none:0").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();

        // No scheduler or kubelet here: the pods exist, unbound, with their ordinal names.
        Awaits.until(Duration.ofSeconds(60), "two pods of the StatefulSet",
                () -> client.pods().inNamespace(ns).withLabels(labels).list().getItems().size() == 2);
        assertThat(client.pods().inNamespace(ns).withLabels(labels).list().getItems())
                .extracting(p -> p.getMetadata().getName()).containsExactlyInAnyOrder("web-0", "web-1");
    }

    private static String widgetYaml(String ns, String name, String spec) {
        return "apiVersion: smoke.oncestream.io/v1\nkind: Widget\nmetadata: {name: " + name + ", namespace: " + ns
                + "}\nspec: " + spec + "\n";
    }

    private static GenericKubernetesResource widget(String ns, String name, int size) {
        return new GenericKubernetesResourceBuilder().withApiVersion("smoke.oncestream.io/v1").withKind("Widget")
                .withNewMetadata().withName(name).withNamespace(ns).endMetadata()
                .addToAdditionalProperties("spec", new HashMap<>(Map.of("size", size))).build();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> spec(GenericKubernetesResource w) {
        return (Map<String, Object>) w.getAdditionalProperties().get("spec");
    }
}
