package io.oncestream.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the real node of {@code deploy/local/node.sh} with this build's images loaded,
 * started once per test run: declare a {@link LocalNode} parameter (after a {@link KubeCluster}
 * one: the node registers with the control plane).
 */
public final class NodeExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == LocalNode.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        LocalService.shared(context, "kube");
        return context.getRoot().getStore(ExtensionContext.Namespace.create(NodeExtension.class))
                .computeIfAbsent(LocalNode.class, k -> LocalNode.start(context), LocalNode.class);
    }
}
