package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.config.TestConfigs;

class KafkaSecretsTest {

    private static JobConfig withProperties(Map<String, String> properties) {
        JobConfig c = JobConfigs.parse(TestConfigs.orders("shop/orders", "127.0.0.1:9092", "orders", "127.0.0.1:9042", "dc1",
                "shop", "orders"));
        return c.withKafkaProperties(properties);
    }

    @Test
    void filesOfAMountedSecretBecomeConsumerPropertiesAndWin(@TempDir Path dir) throws Exception {
        // The layout of a Kubernetes Secret volume: ..data links to a timestamped directory, keys link into it.
        Path data = Files.createDirectory(dir.resolve("..2026_12_02_10_00_00.1"));
        Files.writeString(data.resolve("sasl.jaas.config"), "org.apache.kafka.common.security.plain.PlainLoginModule required;");
        Files.writeString(data.resolve("security.protocol"), "SASL_SSL");
        Files.createSymbolicLink(dir.resolve("..data"), data.getFileName());
        Files.createSymbolicLink(dir.resolve("sasl.jaas.config"), Path.of("..data/sasl.jaas.config"));
        Files.createSymbolicLink(dir.resolve("security.protocol"), Path.of("..data/security.protocol"));

        JobConfig base = withProperties(Map.of("security.protocol", "PLAINTEXT", "fetch.min.bytes", "1"));
        JobConfig applied = KafkaSecrets.apply(base, Map.of(KafkaSecrets.ENV, dir.toString()));
        assertThat(applied.source().properties()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "security.protocol", "SASL_SSL", "fetch.min.bytes", "1",
                "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required;"));
        assertThat(KafkaSecrets.apply(base, Map.of())).isSameAs(base);
    }

    @Test
    void aMissingDirectoryIsAnErrorNamingIt(@TempDir Path dir) {
        Path missing = dir.resolve("nope");
        assertThatThrownBy(() -> KafkaSecrets.apply(withProperties(Map.of()), Map.of(KafkaSecrets.ENV,
                missing.toString()))).hasMessageContaining(missing.toString()).hasMessageContaining("ONCESTREAM_KAFKA_SECRET_DIR");
    }
}
