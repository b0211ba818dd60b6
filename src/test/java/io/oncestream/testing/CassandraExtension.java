package io.oncestream.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the real Cassandra node of {@code deploy/local/cassandra.sh}, started once per
 * test run: declare a {@link CassandraNode} parameter.
 */
public final class CassandraExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == CassandraNode.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        LocalService service = LocalService.shared(context, "cassandra");
        return context.getRoot().getStore(ExtensionContext.Namespace.create(CassandraExtension.class))
                .computeIfAbsent(CassandraNode.class, k -> new CassandraNode(service), CassandraNode.class);
    }
}
