package io.oncestream.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.testing.LocalService;

/**
 * One shape per value: the committed CRD's patterns are the contract's constants, and the worker
 * refuses what they refuse.
 */
class ValidationPatternsTest {

    private static final String CONFIG = """
            {"jobId": "shop/orders", "source": {"bootstrapServers": "kafka:9092", "topics": ["%s"]},
             "sink": {"contactPoints": ["%s"], "localDatacenter": "dc1", "keyspace": "shop", "table": "%s",
                      "columns": {"id": "value.id"}}}
            """;

    @Test
    void theCrdsPatternsAreTheContractsConstants() throws IOException {
        JsonNode spec = new ObjectMapper(new YAMLFactory())
                .readTree(Files.readString(LocalService.repoDir().resolve("crds/streamjobs.oncestream.io-v1.yml")))
                .at("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties");
        Map<String, String> expected = Map.of(
                "/source/properties/kafka/properties/bootstrapServers", ValidationPatterns.HOST_PORT_LIST,
                "/source/properties/kafka/properties/topics/items", ValidationPatterns.TOPIC_NAME,
                "/sink/properties/cassandra/properties/contactPoints/items", ValidationPatterns.HOST_PORT,
                "/sink/properties/cassandra/properties/keyspace", ValidationPatterns.CQL_IDENTIFIER,
                "/sink/properties/cassandra/properties/table", ValidationPatterns.CQL_IDENTIFIER,
                "/deadLetter/properties/table", ValidationPatterns.CQL_IDENTIFIER,
                "/trigger/properties/interval", ValidationPatterns.DURATION,
                "/restartPolicy/properties/maxBackoff", ValidationPatterns.DURATION);
        expected.forEach((path, pattern) -> assertThat(spec.at(path + "/pattern").asText()).as(path).isEqualTo(pattern));
    }

    @Test
    void theWorkerRefusesWhatTheCrdRefuses() {
        for (List<String> bad : List.of(List.of("orders topic", "cassandra:9042", "orders"),
                List.of("orders", "cassandra", "orders"), List.of("orders", "cassandra:9042", "1orders"))) {
            String config = CONFIG.formatted(bad.get(0), bad.get(1), bad.get(2));
            assertThat(catchInvalid(config)).as(bad.toString()).isNotNull();
            assertThat(bad.get(0).matches(ValidationPatterns.TOPIC_NAME) && bad.get(1).matches(ValidationPatterns.HOST_PORT)
                    && bad.get(2).matches(ValidationPatterns.CQL_IDENTIFIER)).as(bad.toString()).isFalse();
        }
        assertThat(catchInvalid(CONFIG.formatted("orders.v2-x_y", "10.0.0.1:9042", "paid_orders"))).isNull();
    }

    private static InvalidConfigException catchInvalid(String config) {
        try {
            JobConfigs.parse(config);
            return null;
        } catch (InvalidConfigException e) {
            return e;
        }
    }
}
