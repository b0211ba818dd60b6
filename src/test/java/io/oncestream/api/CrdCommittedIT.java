package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/**
 * The CRD under {@code crds/} is the one the build generates from {@code io.oncestream.api}
 * (runs after {@code package}, which generates it).
 */
class CrdCommittedIT {

    @Test
    void committedCrdEqualsTheBuildOutput() throws Exception {
        Path repo = LocalService.repoDir();
        Path generated = repo.resolve("target/kubernetes/streamjobs.oncestream.io-v1.yml");
        Path committed = repo.resolve("crds/streamjobs.oncestream.io-v1.yml");
        assertThat(generated).as("the build generates the CRD").exists();
        assertThat(Files.readString(committed))
                .as("crds/ is out of date: cp target/kubernetes/streamjobs.oncestream.io-v1.yml crds/")
                .isEqualTo(Files.readString(generated));
    }
}
