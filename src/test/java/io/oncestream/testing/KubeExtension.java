package io.oncestream.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the real Kubernetes control plane of {@code deploy/local/kube.sh} (etcd,
 * kube-apiserver, kube-controller-manager), started once per test run: declare a
 * {@link KubeCluster} parameter.
 */
public final class KubeExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == KubeCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        LocalService service = LocalService.shared(context, "kube");
        return context.getRoot().getStore(ExtensionContext.Namespace.create(KubeExtension.class))
                .computeIfAbsent(KubeCluster.class, k -> new KubeCluster(service), KubeCluster.class);
    }
}
