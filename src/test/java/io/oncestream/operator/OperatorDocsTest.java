package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.oncestream.api.ConditionReason;
import io.oncestream.api.ConditionType;
import io.oncestream.testing.LocalService;

/** docs/operator.md and the CRD's descriptions name every condition type and reason the status can carry. */
class OperatorDocsTest {

    private static final String START = "<!-- conditions:";
    private static final String END = "<!-- end of conditions -->";

    @Test
    void theConditionsTableHasEveryTypeAndReason() throws IOException {
        String doc = Files.readString(LocalService.repoDir().resolve("docs/operator.md"));
        String table = doc.substring(doc.indexOf(START), doc.indexOf(END));
        Set<String> types = new TreeSet<>();
        Set<String> reasons = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\|([^|]*)\\| (True|False|Unknown) \\|([^|]*)\\|").matcher(table);
        while (row.find()) {
            types.addAll(codes(row.group(1)));
            reasons.addAll(codes(row.group(3)));
        }
        assertThat(types).isEqualTo(names(ConditionType.values()));
        assertThat(reasons).isEqualTo(names(ConditionReason.values()));
    }

    @Test
    void theCrdDescribesEveryConditionType() throws IOException {
        JsonNode crd = new ObjectMapper(new YAMLFactory())
                .readTree(LocalService.repoDir().resolve("crds/streamjobs.oncestream.io-v1.yml").toFile());
        JsonNode status = crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/conditions");
        String listDescription = status.path("description").asText();
        String typeDescription = status.at("/items/properties/type/description").asText();
        for (ConditionType type : ConditionType.values()) {
            assertThat(listDescription).as("status.conditions description").contains(type.name());
            assertThat(typeDescription).as("status.conditions[].type description").contains(type.name());
        }
    }

    private static Set<String> codes(String cell) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("`([A-Za-z]+)`").matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static Set<String> names(Enum<?>[] values) {
        return new TreeSet<>(Stream.of(values).map(Enum::name).toList());
    }
}
