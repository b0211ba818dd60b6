package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.oncestream.contract.EngineState;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.testing.LocalService;

/** docs/worker.md says what the worker does: its fields, their defaults, the required ones, its states. */
class WorkerDocsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MINIMAL = """
            {"jobId": "shop/orders", "source": {"bootstrapServers": "kafka:9092", "topics": ["orders"]},
             "sink": {"contactPoints": ["cassandra:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "orders",
                      "columns": {"id": "value.id"}}}
            """;
    /** Defaults the table gives as a rule rather than a value, checked one by one below. */
    private static final Set<String> DERIVED = Set.of("source.groupId");

    private static String doc;
    /** Field → default cell, in table order. */
    private static final Map<String, String> ROWS = new LinkedHashMap<>();

    @BeforeAll
    static void readTable() throws IOException {
        doc = Files.readString(LocalService.repoDir().resolve("docs/worker.md"));
        String section = doc.substring(doc.indexOf("## Configuration"), doc.indexOf("## Partitions"));
        Matcher row = Pattern.compile("(?m)^\\| `([^`]+)`(?:, `([^`]+)`)? \\| ([^|]+) \\|").matcher(section);
        while (row.find()) {
            ROWS.put(row.group(1), row.group(3).strip());
            if (row.group(2) != null) {
                ROWS.put(row.group(2), row.group(3).strip());
            }
        }
    }

    @Test
    void theTableHasARowForEveryFieldOfTheConfiguration() {
        assertThat(new TreeSet<>(ROWS.keySet())).isEqualTo(fields(JobConfig.class, ""));
    }

    @Test
    void theDefaultsInTheTableAreTheWorkers() throws IOException {
        JsonNode parsed = JSON.readTree(JobConfigs.toJson(JobConfigs.parse(MINIMAL)));
        List<String> checked = new ArrayList<>();
        ROWS.forEach((field, cell) -> {
            JsonNode value = parsed.at("/" + field.replace('.', '/'));
            Matcher literal = Pattern.compile("`([^`]*)`").matcher(cell);
            if (cell.equals("required") || DERIVED.contains(field)) {
                return;
            }
            if (cell.equals("none") || cell.equals("—")) {
                assertThat(value.isNull() || value.isMissingNode()).as(field + " has no default, is " + value).isTrue();
                return;
            }
            assertThat(literal.matches()).as(field + ": a default is one `value`, was " + cell).isTrue();
            String text = value.isValueNode() ? value.asText() : value.toString();
            assertThat(text).as("default of " + field).isEqualToIgnoringCase(literal.group(1));
            checked.add(field);
        });
        assertThat(checked).hasSizeGreaterThanOrEqualTo(12);
        assertThat(ROWS.get("source.groupId")).contains("`oncestream-shop.orders`");
        assertThat(parsed.at("/source/groupId").asText()).isEqualTo("oncestream-shop.orders");
    }

    @Test
    void everyRequiredFieldIsRefusedByNameWhenMissing() throws IOException {
        List<String> required = ROWS.entrySet().stream().filter(e -> e.getValue().equals("required")).map(Map.Entry::getKey).toList();
        assertThat(required).contains("jobId", "source.topics", "sink.columns");
        for (String field : required) {
            ObjectNode config = (ObjectNode) JSON.readTree(MINIMAL);
            String[] path = field.split("\\.");
            ObjectNode parent = config;
            for (int i = 0; i < path.length - 1; i++) {
                parent = (ObjectNode) parent.get(path[i]);
            }
            parent.remove(path[path.length - 1]);
            assertThatThrownBy(() -> JobConfigs.parse(config.toString())).as("without " + field)
                    .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith(field + ": ");
        }
    }

    @Test
    void theStatesInTheDocsAreTheEngines() {
        String endpoints = doc.substring(doc.indexOf("## Endpoints"));
        String states = endpoints.substring(endpoints.indexOf("`state` ("), endpoints.indexOf("), `batchId`"));
        Set<String> documented = new TreeSet<>();
        Matcher m = Pattern.compile("`([A-Z_]+)`").matcher(states);
        while (m.find()) {
            documented.add(m.group(1));
        }
        assertThat(documented).isEqualTo(new TreeSet<>(Stream.of(EngineState.values()).map(Enum::name).toList()));
    }

    /** The dotted names of a record's leaf components, nested records flattened. */
    private static Set<String> fields(Class<?> type, String prefix) {
        Set<String> out = new TreeSet<>();
        for (RecordComponent c : type.getRecordComponents()) {
            if (c.getType().isRecord()) {
                out.addAll(fields(c.getType(), prefix + c.getName() + "."));
            } else {
                out.add(prefix + c.getName());
            }
        }
        return out;
    }
}
