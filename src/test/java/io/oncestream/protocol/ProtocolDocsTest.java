package io.oncestream.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/**
 * docs/protocol.md stays tied to what checks it: every invariant names at least one test that
 * exists (class, or class and method) and a property one of the models asserts (model/protocol.pml,
 * model/rescale.pml); every mutation it lists is a switch of a model and of model/check.sh.
 */
class ProtocolDocsTest {

    private static final Path REPO = LocalService.repoDir();

    @Test
    void everyInvariantNamesAnExistingTestAndAModelProperty() throws IOException {
        String doc = Files.readString(REPO.resolve("docs/protocol.md"));
        String model = Files.readString(REPO.resolve("model/protocol.pml")) + Files.readString(REPO.resolve("model/rescale.pml"));
        Set<String> properties = new TreeSet<>();
        Matcher asserted = Pattern.compile("assert\\([^;]*\\);\\s*/\\* ([a-z_]+)").matcher(model);
        while (asserted.find()) {
            properties.add(asserted.group(1));
        }
        assertThat(properties).contains("table_exact", "timestamps_stable", "replay_exact",
                "group_behind_table", "recoverable", "single_owner", "older_epoch_sealed");

        Matcher row = Pattern.compile("(?m)^\\| (I\\d+) \\|([^\\n]*)$").matcher(doc);
        List<String> invariants = new ArrayList<>();
        while (row.find()) {
            invariants.add(row.group(1));
            String text = row.group(2);
            List<String> tests = new ArrayList<>();
            Matcher name = Pattern.compile("`([A-Z][A-Za-z]*(?:Test|IT|E2E))(?:\\.([a-zA-Z]+))?`").matcher(text);
            while (name.find()) {
                Path source = testSource(name.group(1));
                assertThat(source).as(row.group(1) + " names " + name.group(1)).isNotNull();
                if (name.group(2) != null) {
                    assertThat(Files.readString(source)).as(row.group(1) + " names " + name.group(0))
                            .contains("void " + name.group(2) + "(");
                }
                tests.add(name.group(1));
            }
            assertThat(tests).as(row.group(1) + ": tests named").isNotEmpty();
            assertThat(properties).as(row.group(1) + ": a model property named").anyMatch(p -> text.contains("`" + p + "`"));
        }
        assertThat(invariants).containsExactly("I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10");
    }

    @Test
    void everyMutationListedIsASwitchOfTheModelAndIsChecked() throws IOException {
        String doc = Files.readString(REPO.resolve("docs/protocol.md"));
        String model = Files.readString(REPO.resolve("model/protocol.pml")) + Files.readString(REPO.resolve("model/rescale.pml"));
        String check = Files.readString(REPO.resolve("model/check.sh"));
        Matcher m = Pattern.compile("`MUTATION_([A-Z_]+)`").matcher(doc);
        Set<String> listed = new TreeSet<>();
        while (m.find()) {
            listed.add(m.group(1));
        }
        assertThat(listed).hasSize(14);
        for (String mutation : listed) {
            assertThat(model).as(mutation).containsPattern("#(ifn?def|(el)?if defined\\() ?MUTATION_" + mutation + "\\b");
            assertThat(check).as(mutation + " in check.sh").contains(mutation);
        }
    }

    private static Path testSource(String simpleName) throws IOException {
        try (Stream<Path> files = Files.walk(REPO.resolve("src/test/java"))) {
            return files.filter(f -> f.getFileName().toString().equals(simpleName + ".java")).findFirst().orElse(null);
        }
    }
}
