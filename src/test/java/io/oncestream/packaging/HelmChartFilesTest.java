package io.oncestream.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.oncestream.testing.GeneratedSection;
import io.oncestream.testing.LocalService;

/**
 * The chart's files against their sources: its CRD is the committed one, its appVersion the
 * project's, every value has a schema entry and a row in the chart README's table.
 */
class HelmChartFilesTest {

    private static final Path REPO = LocalService.repoDir();
    private static final Path CHART = REPO.resolve("helm/oncestream");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TABLE_START = "<!-- values table: generated from values.yaml, checked by HelmChartFilesTest -->";
    private static final String TABLE_END = "<!-- end of values table -->";

    @Test
    void theChartsCrdIsTheCommittedOne() throws IOException {
        assertThat(Files.readString(CHART.resolve("crds/streamjobs.oncestream.io-v1.yml")))
                .as("helm/oncestream/crds/ differs: cp crds/streamjobs.oncestream.io-v1.yml helm/oncestream/crds/")
                .isEqualTo(Files.readString(REPO.resolve("crds/streamjobs.oncestream.io-v1.yml")));
    }

    @Test
    void theChartsAppVersionIsTheProjectsVersion() throws IOException {
        String pom = Files.readString(REPO.resolve("pom.xml"));
        Matcher version = Pattern.compile("^  <version>(.+)</version>$", Pattern.MULTILINE).matcher(pom);
        assertThat(version.find()).isTrue();
        assertThat(YAML.readTree(CHART.resolve("Chart.yaml").toFile()).get("appVersion").asText()).isEqualTo(version.group(1));
    }

    @Test
    void everyValueHasASchemaEntry() throws IOException {
        JsonNode values = YAML.readTree(CHART.resolve("values.yaml").toFile());
        JsonNode schema = JSON.readTree(CHART.resolve("values.schema.json").toFile());
        List<String> missing = new ArrayList<>();
        walk(values, "", (path, node) -> {
            if (schemaAt(schema, path) == null) {
                missing.add(path);
            }
        });
        assertThat(missing).as("values without a schema entry").isEmpty();
    }

    @Test
    void theReadmeTableListsEveryDocumentedValueWithItsDefault() throws IOException {
        GeneratedSection.assertCurrent("helm/oncestream/README.md", TABLE_START, TABLE_END, valuesTable(), "helm-values-table.md");
    }

    /**
     * One row per value that carries a {@code # -- description} comment in values.yaml: its
     * dotted key, its type, its default and the description.
     */
    static String valuesTable() throws IOException {
        List<String> lines = Files.readAllLines(CHART.resolve("values.yaml"));
        JsonNode values = YAML.readTree(CHART.resolve("values.yaml").toFile());
        StringBuilder table = new StringBuilder("| value | type | default | description |\n| --- | --- | --- | --- |\n");
        List<String> path = new ArrayList<>();
        List<Integer> indents = new ArrayList<>();
        StringBuilder comment = null;
        Pattern key = Pattern.compile("^( *)([A-Za-z][A-Za-z0-9]*):.*$");
        for (String line : lines) {
            String trimmed = line.strip();
            if (trimmed.startsWith("# -- ")) {
                comment = new StringBuilder(trimmed.substring(5));
                continue;
            }
            if (trimmed.startsWith("# ") && comment != null) {
                comment.append(' ').append(trimmed.substring(2));
                continue;
            }
            Matcher m = key.matcher(line);
            if (!m.matches()) {
                comment = null;
                continue;
            }
            int indent = m.group(1).length();
            while (!indents.isEmpty() && indents.get(indents.size() - 1) >= indent) {
                indents.remove(indents.size() - 1);
                path.remove(path.size() - 1);
            }
            path.add(m.group(2));
            indents.add(indent);
            if (comment != null) {
                String dotted = String.join(".", path);
                JsonNode value = values.at("/" + String.join("/", path));
                table.append("| `").append(dotted).append("` | ").append(type(value)).append(" | `")
                        .append(JSON.writeValueAsString(value)).append("` | ").append(comment).append(" |\n");
            }
            comment = null;
        }
        return table.toString();
    }

    private static String type(JsonNode value) {
        if (value.isTextual()) {
            return "string";
        }
        if (value.isIntegralNumber()) {
            return "integer";
        }
        if (value.isBoolean()) {
            return "boolean";
        }
        return value.isArray() ? "list" : "object";
    }

    private interface Visitor {
        void leaf(String path, JsonNode node);
    }

    /** Visits every scalar, list and empty map of the values, by JSON pointer. */
    private static void walk(JsonNode node, String path, Visitor visitor) {
        if (node.isObject() && node.size() > 0) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                walk(field.getValue(), path + "/" + field.getKey(), visitor);
            }
        } else {
            visitor.leaf(path, node);
        }
    }

    /** The schema of the value at a JSON pointer, following {@code $ref}s; null if the schema has no such property. */
    private static JsonNode schemaAt(JsonNode schema, String pointer) {
        JsonNode at = schema;
        for (String part : pointer.substring(1).split("/")) {
            at = resolve(schema, at);
            JsonNode properties = at.get("properties");
            JsonNode next = properties == null ? null : properties.get(part);
            if (next == null) {
                JsonNode additional = at.get("additionalProperties");
                if (additional == null || !additional.isObject()) {
                    return null;
                }
                next = additional;
            }
            at = next;
        }
        return resolve(schema, at);
    }

    private static JsonNode resolve(JsonNode schema, JsonNode node) {
        JsonNode ref = node.get("$ref");
        return ref == null ? node : schema.at(ref.asText().substring(1));
    }
}
