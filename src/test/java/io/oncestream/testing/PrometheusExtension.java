package io.oncestream.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the stack's Prometheus of {@code deploy/local/prometheus.sh}, started once per
 * test run (after the API server, whose pods it discovers): declare a {@link PrometheusServer}
 * parameter after a {@link KubeCluster} one.
 */
public final class PrometheusExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == PrometheusServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        LocalService service = LocalService.shared(context, "prometheus");
        return context.getRoot().getStore(ExtensionContext.Namespace.create(PrometheusExtension.class))
                .computeIfAbsent(PrometheusServer.class, k -> new PrometheusServer(service), PrometheusServer.class);
    }
}
