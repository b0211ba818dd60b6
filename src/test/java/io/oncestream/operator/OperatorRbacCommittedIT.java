package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.GeneratedManifests;
import io.oncestream.testing.LocalService;

/**
 * deploy/operator/rbac.yaml is the ServiceAccount and RBAC the build generates (runs after
 * {@code package}); the Operator*IT classes run the operator with exactly that file.
 */
class OperatorRbacCommittedIT {

    @Test
    void committedRbacEqualsTheBuildOutput() throws Exception {
        Path repo = LocalService.repoDir();
        Path generated = repo.resolve(GeneratedManifests.MANIFESTS);
        assertThat(generated).as("the build generates the manifests").exists();
        String committed = Files.readString(repo.resolve("deploy/operator/rbac.yaml"));
        String expected = GeneratedManifests.rbacFile(Files.readString(generated), GeneratedManifests.header(committed));
        Files.writeString(repo.resolve("target/rbac.yaml"), expected);
        assertThat(committed).as("deploy/operator/rbac.yaml is out of date: cp target/rbac.yaml deploy/operator/rbac.yaml")
                .isEqualTo(expected);
    }
}
