package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.GeneratedManifests;
import io.oncestream.testing.LocalService;

/**
 * The CRD under {@code crds/} is the one the build generates from {@code io.oncestream.api}
 * (runs after {@code package}, which generates it), with one edit: the generator sorts the
 * printer columns by name, and {@code kubectl get streamjobs} shows them in the conventional
 * order instead, AGE last ({@link GeneratedManifests#crdWithColumnsInOrder}).
 */
class CrdCommittedIT {

    @Test
    void committedCrdIsTheBuildOutputWithItsColumnsInOrder() throws Exception {
        Path repo = LocalService.repoDir();
        Path generated = repo.resolve(GeneratedManifests.CRD);
        Path committed = repo.resolve("crds/streamjobs.oncestream.io-v1.yml");
        assertThat(generated).as("the build generates the CRD").exists();
        String expected = GeneratedManifests.crdWithColumnsInOrder(Files.readString(generated));
        Path expectedFile = repo.resolve("target/crds/streamjobs.oncestream.io-v1.yml");
        Files.createDirectories(expectedFile.getParent());
        Files.writeString(expectedFile, expected);
        assertThat(Files.readString(committed))
                .as("crds/ is out of date: cp target/crds/streamjobs.oncestream.io-v1.yml crds/")
                .isEqualTo(expected);
    }

    @Test
    void theColumnsAreReorderedNotLost() throws Exception {
        String generated = Files.readString(LocalService.repoDir().resolve(GeneratedManifests.CRD));
        String ordered = GeneratedManifests.crdWithColumnsInOrder(generated);
        assertThat(ordered.lines().sorted().toList()).isEqualTo(generated.lines().sorted().toList());
        List<Integer> positions = GeneratedManifests.COLUMNS.stream().map(c -> ordered.indexOf("name: \"" + c + "\"")).toList();
        assertThat(positions).allMatch(p -> p > 0).isSorted();
    }
}
