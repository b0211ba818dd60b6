package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.oncestream.testing.GeneratedSection;
import io.oncestream.testing.LocalService;

/**
 * docs/streamjob.md against the CRD: its field tables are generated from the committed CRD
 * (type, default, validation, description of every field), and its table of worker settings
 * names every setting of docs/worker.md and only StreamJob fields that exist.
 */
class StreamJobDocsTest {

    private static final Path REPO = LocalService.repoDir();
    private static final String START = "<!-- fields: generated from crds/, checked by StreamJobDocsTest -->";
    private static final String END = "<!-- end of fields -->";

    @Test
    void theFieldTablesAreTheCrds() throws IOException {
        GeneratedSection.assertCurrent("docs/streamjob.md", START, END, fieldTables(schema()), "streamjob-fields.md");
    }

    @Test
    void everyWorkerSettingIsMappedToAStreamJobFieldThatExists() throws IOException {
        String workerDoc = Files.readString(REPO.resolve("docs/worker.md"));
        String configSection = workerDoc.substring(workerDoc.indexOf("## Configuration"), workerDoc.indexOf("## Partitions"));
        Set<String> workerSettings = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([^`]+)`(?:, `([^`]+)`)? \\|").matcher(configSection);
        while (row.find()) {
            workerSettings.add(row.group(1));
            if (row.group(2) != null) {
                workerSettings.add(row.group(2));
            }
        }
        assertThat(workerSettings).hasSizeGreaterThan(15);

        String doc = Files.readString(REPO.resolve("docs/streamjob.md"));
        String mapping = doc.substring(doc.indexOf("## Worker settings"), doc.indexOf(START));
        Set<String> mapped = new TreeSet<>();
        Set<String> specFields = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `([^`]+)` \\| (.+) \\|$").matcher(mapping);
        while (m.find()) {
            mapped.add(m.group(1));
            Matcher field = Pattern.compile("`(spec\\.[A-Za-z.]+)`").matcher(m.group(2));
            while (field.find()) {
                specFields.add(field.group(1));
            }
        }
        assertThat(mapped).as("worker settings in docs/streamjob.md's mapping").isEqualTo(workerSettings);
        Set<String> crdFields = new TreeSet<>();
        walk(schema().at("/properties/spec"), "spec", (path, node, required) -> crdFields.add(path));
        assertThat(crdFields).as("StreamJob fields the mapping names").containsAll(specFields);
    }

    private static JsonNode schema() throws IOException {
        JsonNode crd = new ObjectMapper(new YAMLFactory()).readTree(REPO.resolve("crds/streamjobs.oncestream.io-v1.yml").toFile());
        return crd.at("/spec/versions/0/schema/openAPIV3Schema");
    }

    /** Two tables, spec and status: one row per field. */
    static String fieldTables(JsonNode schema) {
        StringBuilder out = new StringBuilder();
        for (String part : List.of("spec", "status")) {
            out.append("\n### `").append(part).append("`\n\n")
                    .append("| field | type | default | validation | description |\n| --- | --- | --- | --- | --- |\n");
            walk(schema.at("/properties/" + part), part, (path, node, required) -> out.append("| `").append(path).append("` | ")
                    .append(type(node)).append(" | ").append(node.has("default") ? "`" + node.get("default") + "`" : "")
                    .append(" | ").append(validation(node, required)).append(" | ")
                    .append(node.path("description").asText().replace("|", "\\|").replace("\n", " ")).append(" |\n"));
        }
        return out.toString();
    }

    private interface Visitor {
        void field(String path, JsonNode node, boolean required);
    }

    private static void walk(JsonNode node, String path, Visitor visitor) {
        JsonNode properties = node.path("properties");
        JsonNode items = node.path("items");
        if (!properties.isObject() && items.path("properties").isObject()) {
            properties = items.path("properties");
            node = items;
            path = path + "[]";
        }
        Set<String> required = new TreeSet<>();
        node.path("required").forEach(r -> required.add(r.asText()));
        for (Iterator<Map.Entry<String, JsonNode>> it = properties.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> field = it.next();
            String fieldPath = path + "." + field.getKey();
            visitor.field(fieldPath, field.getValue(), required.contains(field.getKey()));
            walk(field.getValue(), fieldPath, visitor);
        }
    }

    private static String type(JsonNode node) {
        if (node.path("x-kubernetes-int-or-string").asBoolean()) {
            return "int or string";
        }
        String type = node.path("type").asText();
        if (type.equals("array")) {
            return "list of " + type(node.path("items"));
        }
        if (type.equals("object") && node.path("additionalProperties").isObject()) {
            return "map of " + type(node.path("additionalProperties"));
        }
        return type;
    }

    private static String validation(JsonNode node, boolean required) {
        List<String> rules = new ArrayList<>();
        if (required) {
            rules.add("required");
        }
        if (node.has("enum")) {
            List<String> values = new ArrayList<>();
            node.get("enum").forEach(v -> values.add(v.asText()));
            rules.add("one of " + String.join(", ", values));
        }
        bound(node, "minimum", "≥ ", rules);
        bound(node, "maximum", "≤ ", rules);
        bound(node, "minLength", "length ≥ ", rules);
        bound(node, "maxLength", "length ≤ ", rules);
        bound(node, "minItems", "items ≥ ", rules);
        bound(node, "maxItems", "items ≤ ", rules);
        bound(node, "minProperties", "entries ≥ ", rules);
        bound(node, "maxProperties", "entries ≤ ", rules);
        if (node.has("pattern")) {
            rules.add("matches `" + node.get("pattern").asText().replace("|", "\\|") + "`");
        }
        node.path("x-kubernetes-validations").forEach(v -> rules.add(v.path("message").asText()));
        return String.join("; ", rules);
    }

    private static void bound(JsonNode node, String key, String prefix, List<String> rules) {
        if (node.has(key)) {
            rules.add(prefix + node.get(key).asLong());
        }
    }
}
