package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/**
 * deploy/operator/rbac.yaml is the ServiceAccount and RBAC the build generates (runs after
 * {@code package}); the Operator*IT classes run the operator with exactly that file.
 */
class OperatorRbacCommittedIT {

    @Test
    void committedRbacEqualsTheBuildOutput() throws Exception {
        Path repo = LocalService.repoDir();
        Path generated = repo.resolve("target/kubernetes/kubernetes.yml");
        assertThat(generated).as("the build generates the manifests").exists();
        String rbac = Arrays.stream(Files.readString(generated).split("(?m)^---\n"))
                .filter(doc -> doc.matches("(?s).*(?m)^kind: (ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)$.*"))
                .map(doc -> "---\n" + doc)
                .collect(Collectors.joining());
        String committed = Files.readString(repo.resolve("deploy/operator/rbac.yaml"));
        String header = committed.substring(0, committed.indexOf("---\n"));
        Path expected = repo.resolve("target/rbac.yaml");
        Files.writeString(expected, header + rbac);
        assertThat(committed).as("deploy/operator/rbac.yaml is out of date: cp target/rbac.yaml deploy/operator/rbac.yaml")
                .isEqualTo(header + rbac);
    }
}
