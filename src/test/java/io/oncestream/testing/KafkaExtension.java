package io.oncestream.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the real Kafka broker of {@code deploy/local/kafka.sh}, started once per
 * test run: declare a {@link KafkaBroker} parameter on a test, constructor or lifecycle method.
 */
public final class KafkaExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == KafkaBroker.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        LocalService service = LocalService.shared(context, "kafka");
        return context.getRoot().getStore(ExtensionContext.Namespace.create(KafkaExtension.class))
                .computeIfAbsent(KafkaBroker.class, k -> new KafkaBroker(service), KafkaBroker.class);
    }
}
