package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/**
 * The CRD under {@code crds/} is the one the build generates from {@code io.oncestream.api}
 * (runs after {@code package}, which generates it), with one edit: the generator sorts the
 * printer columns by name, and {@code kubectl get streamjobs} shows them in the conventional
 * order instead, AGE last.
 */
class CrdCommittedIT {

    /** The order of {@code kubectl get sj}'s columns after NAME. */
    static final List<String> COLUMNS = List.of("Phase", "Batch", "Lag", "Lag-Seconds", "Rate", "Age");

    @Test
    void committedCrdIsTheBuildOutputWithItsColumnsInOrder() throws Exception {
        Path repo = LocalService.repoDir();
        Path generated = repo.resolve("target/kubernetes/streamjobs.oncestream.io-v1.yml");
        Path committed = repo.resolve("crds/streamjobs.oncestream.io-v1.yml");
        assertThat(generated).as("the build generates the CRD").exists();
        String expected = inColumnOrder(Files.readString(generated));
        Path expectedFile = repo.resolve("target/crds/streamjobs.oncestream.io-v1.yml");
        Files.createDirectories(expectedFile.getParent());
        Files.writeString(expectedFile, expected);
        assertThat(Files.readString(committed))
                .as("crds/ is out of date: cp target/crds/streamjobs.oncestream.io-v1.yml crds/")
                .isEqualTo(expected);
    }

    @Test
    void theColumnsAreReorderedNotLost() throws Exception {
        String generated = Files.readString(LocalService.repoDir().resolve("target/kubernetes/streamjobs.oncestream.io-v1.yml"));
        String ordered = inColumnOrder(generated);
        assertThat(ordered.lines().sorted().toList()).isEqualTo(generated.lines().sorted().toList());
        List<Integer> positions = COLUMNS.stream().map(c -> ordered.indexOf("name: \"" + c + "\"")).toList();
        assertThat(positions).allMatch(p -> p > 0).isSorted();
    }

    /** The generated YAML with the entries of each {@code additionalPrinterColumns} list in {@link #COLUMNS} order. */
    static String inColumnOrder(String crd) {
        List<String> lines = crd.lines().toList();
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i++);
            out.append(line).append('\n');
            if (!line.trim().equals("- additionalPrinterColumns:")) {
                continue;
            }
            String entryIndent = line.substring(0, line.indexOf('-')) + "  - ";
            String continuation = " ".repeat(entryIndent.length());
            List<List<String>> entries = new ArrayList<>();
            while (i < lines.size() && (lines.get(i).startsWith(entryIndent) || lines.get(i).startsWith(continuation))) {
                if (lines.get(i).startsWith(entryIndent)) {
                    entries.add(new ArrayList<>());
                }
                entries.get(entries.size() - 1).add(lines.get(i++));
            }
            entries.sort(Comparator.comparingInt(CrdCommittedIT::rank));
            entries.forEach(e -> e.forEach(l -> out.append(l).append('\n')));
        }
        return out.toString();
    }

    private static int rank(List<String> entry) {
        for (String line : entry) {
            String t = line.replaceFirst("^[ -]+", "");
            if (t.startsWith("name: ")) {
                int r = COLUMNS.indexOf(t.substring("name: ".length()).replace("\"", ""));
                if (r >= 0) {
                    return r;
                }
                throw new IllegalStateException("printer column " + t + " is not in " + COLUMNS);
            }
        }
        throw new IllegalStateException("printer column without a name: " + entry);
    }
}
