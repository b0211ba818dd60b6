package io.oncestream.worker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import io.oncestream.engine.config.JobConfig;

/**
 * Kafka client settings that must not be in the job's ConfigMap (SASL JAAS configuration, TLS
 * passwords): the operator mounts the job's {@code spec.source.kafka.secretRef} Secret as a
 * directory, one file per key, and names it in {@value #ENV}. Each file becomes a consumer
 * property; Kubernetes' own entries (names starting with a dot) are skipped.
 */
final class KafkaSecrets {

    static final String ENV = "ONCESTREAM_KAFKA_SECRET_DIR";

    private KafkaSecrets() {
    }

    /** {@code config} with the Secret's properties added (they win over same-named plain properties). */
    static JobConfig apply(JobConfig config, Map<String, String> env) {
        String dir = env.get(ENV);
        if (dir == null || dir.isBlank()) {
            return config;
        }
        Map<String, String> properties = new LinkedHashMap<>(config.source().properties());
        properties.putAll(read(Path.of(dir)));
        return config.withKafkaProperties(properties);
    }

    static Map<String, String> read(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(ENV + " names " + dir + ", which is not a directory");
        }
        List<Path> entries;
        try (Stream<Path> files = Files.list(dir)) {
            entries = files.filter(f -> !f.getFileName().toString().startsWith(".") && Files.isRegularFile(f)).toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot list the Kafka secret directory " + dir + " (" + ENV + "): " + e, e);
        }
        Map<String, String> properties = new TreeMap<>();
        for (Path f : entries) {
            try {
                properties.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read Kafka secret file " + f + ": " + e, e);
            }
        }
        return properties;
    }
}
