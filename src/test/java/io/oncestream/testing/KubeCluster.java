package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * The test run's real Kubernetes control plane: an admin client, clients that carry a
 * ServiceAccount's token (so its RBAC decides), and the kubectl and helm built for it.
 */
public final class KubeCluster implements AutoCloseable {

    private static final Duration CLI_TIMEOUT = Duration.ofMinutes(2);

    private final Path kubeconfig;
    private final Path auditLog;
    private final Path binDir;
    private final Config adminConfig;
    private final KubernetesClient admin;
    private final List<KubernetesClient> clients = new ArrayList<>();

    KubeCluster(LocalService service) {
        this(service.env());
    }

    /** A cluster started by {@code kube.sh} elsewhere, from what {@code kube.sh env} printed. */
    public static KubeCluster fromEnv(Map<String, String> env) {
        return new KubeCluster(env);
    }

    private KubeCluster(Map<String, String> env) {
        this.kubeconfig = Path.of(env.get("KUBECONFIG"));
        this.binDir = Path.of(env.get("KUBE_BIN"));
        this.auditLog = Path.of(env.get("KUBE_AUDIT_LOG"));
        try {
            this.adminConfig = Config.fromKubeconfig(Files.readString(kubeconfig));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + kubeconfig, e);
        }
        this.admin = new KubernetesClientBuilder().withConfig(adminConfig).build();
    }

    /** The admin kubeconfig file (user {@code admin}, group {@code system:masters}). */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** The API server's audit log: one JSON line per request other than the control plane's own. */
    public AuditLog auditLog() {
        return new AuditLog(auditLog);
    }

    /** A client with cluster-admin rights, shared by the tests; do not close it. */
    public KubernetesClient admin() {
        return admin;
    }

    /** Creates a namespace named {@code prefix-<random>} and returns its name. */
    public String createNamespace(String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return name;
    }

    /**
     * Deletes the namespaces and waits until they are gone, not just terminating: an operator of a
     * later test class, which watches every namespace, would otherwise reconcile the jobs left in
     * them, and every write it made there would be refused.
     */
    public void deleteNamespaces(Duration timeout, java.util.Collection<String> namespaces) {
        for (String ns : namespaces) {
            admin.namespaces().withName(ns).delete();
        }
        Awaits.until(timeout, "namespaces " + namespaces + " to be gone",
                () -> namespaces.stream().allMatch(ns -> admin.namespaces().withName(ns).get() == null));
    }

    /** Creates the ServiceAccount if it does not exist. */
    public void createServiceAccount(String namespace, String name) {
        admin.serviceAccounts().inNamespace(namespace).resource(new ServiceAccountBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build()).serverSideApply();
    }

    /**
     * A client that authenticates with a real token of the ServiceAccount (TokenRequest API),
     * so every call it makes is allowed or forbidden by that account's RBAC alone.
     */
    public KubernetesClient clientFor(String namespace, String serviceAccount) {
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl(adminConfig.getMasterUrl())
                .withCaCertData(adminConfig.getCaCertData())
                .withOauthToken(token(namespace, serviceAccount))
                .withNamespace(namespace)
                .withRequestRetryBackoffLimit(0)
                .build();
        KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
        synchronized (clients) {
            clients.add(client);
        }
        return client;
    }

    /**
     * Writes a kubeconfig that authenticates as the ServiceAccount (a real TokenRequest token)
     * with {@code namespace} as its default namespace: what a process running as that account
     * in a pod would see.
     */
    public Path kubeconfigFor(String namespace, String serviceAccount, Path file) {
        String yaml = "apiVersion: v1\nkind: Config\n"
                + "clusters:\n- name: local\n  cluster:\n    server: " + adminConfig.getMasterUrl() + "\n"
                + "    certificate-authority-data: " + adminConfig.getCaCertData() + "\n"
                + "users:\n- name: " + serviceAccount + "\n  user:\n    token: " + token(namespace, serviceAccount) + "\n"
                + "contexts:\n- name: sa\n  context:\n    cluster: local\n    user: " + serviceAccount + "\n"
                + "    namespace: " + namespace + "\n"
                + "current-context: sa\n";
        try {
            Files.writeString(file, yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    private String token(String namespace, String serviceAccount) {
        TokenRequest request = admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build());
        return request.getStatus().getToken();
    }

    /** Runs the cluster's own kubectl with the admin kubeconfig; {@code stdin} may be null. */
    public Command.Result kubectl(String stdin, String... args) {
        return cli("kubectl", stdin, args);
    }

    /** Runs the helm built with the control plane, with the admin kubeconfig. */
    public Command.Result helm(String... args) {
        return cli("helm", null, args);
    }

    private Command.Result cli(String tool, String stdin, String... args) {
        List<String> argv = new ArrayList<>();
        argv.add(binDir.resolve(tool).toString());
        argv.addAll(List.of(args));
        Path home = binDir.getParent().resolve("cli-home");
        return new Command(argv)
                .env(Map.of("KUBECONFIG", kubeconfig.toString(),
                        "HELM_CACHE_HOME", home.resolve("helm-cache").toString(),
                        "HELM_CONFIG_HOME", home.resolve("helm-config").toString(),
                        "HELM_DATA_HOME", home.resolve("helm-data").toString()))
                .stdin(stdin)
                .run(CLI_TIMEOUT);
    }

    @Override
    public void close() {
        synchronized (clients) {
            clients.forEach(KubernetesClient::close);
        }
        admin.close();
    }
}
