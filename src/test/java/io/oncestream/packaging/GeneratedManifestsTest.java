package io.oncestream.packaging;

import static io.oncestream.testing.GeneratedManifests.objects;
import static io.oncestream.testing.GeneratedManifests.only;
import static io.oncestream.testing.GeneratedManifests.rulesWithNames;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.oncestream.testing.GeneratedManifests;
import io.oncestream.testing.LocalService;

/**
 * The committed copies of what the build generates, checked without a cluster, helm or a build:
 * the StreamJob CRD in {@code deploy/operator/operator.yaml} is the one in {@code crds/} (the
 * chart's copy is {@link HelmChartFilesTest}'s), and the RBAC rules of {@code operator.yaml} and
 * of the chart's templates are those of {@code deploy/operator/rbac.yaml}. When the build's output
 * under {@code target/kubernetes} is newer than the sources, {@code crds/} and {@code rbac.yaml}
 * are also checked against it; otherwise those two checks are skipped here and made by
 * {@code CrdCommittedIT} and {@code OperatorRbacCommittedIT} after {@code package}.
 * {@code HelmChartIT} renders the chart with helm and checks the same copies against the API server.
 */
class GeneratedManifestsTest {

    private static final Path REPO = LocalService.repoDir();
    private static final String CRD = "crds/streamjobs.oncestream.io-v1.yml";
    /** The operator's ClusterRole for the objects it reconciles, and its leader-election Role, in deploy/operator/rbac.yaml. */
    private static final String OPERATOR = "oncestream-operator";
    private static final String LEADER = "oncestream-operator-leader";

    @Test
    void theOneFileManifestHoldsTheCommittedCrd() throws IOException {
        JsonNode inManifest = only(objects(read("deploy/operator/operator.yaml")), "CustomResourceDefinition");
        assertThat(inManifest).as("the CRD in deploy/operator/operator.yaml differs from " + CRD + ": run deploy/operator/render.sh")
                .isEqualTo(GeneratedManifests.tree(read(CRD)));
    }

    @Test
    void theOneFileManifestGrantsTheCommittedRules() throws IOException {
        List<JsonNode> manifest = objects(read("deploy/operator/operator.yaml"));
        List<JsonNode> committed = committedRbac();
        List<String> notInManifest = new ArrayList<>();
        for (JsonNode role : committed) {
            String kind = role.path("kind").asText();
            if (!kind.equals("ClusterRole") && !kind.equals("Role")) {
                continue;
            }
            String name = role.at("/metadata/name").asText();
            JsonNode rendered = GeneratedManifests.named(manifest, kind, name);
            if (rendered == null) {
                notInManifest.add(kind + " " + name);
                continue;
            }
            assertThat(rulesWithNames(rendered.path("rules")))
                    .as("the " + kind + " " + name + " in deploy/operator/operator.yaml differs from deploy/operator/rbac.yaml's:"
                            + " run deploy/operator/render.sh")
                    .isEqualTo(rulesWithNames(role.path("rules")));
        }
        assertThat(notInManifest).as("roles of deploy/operator/rbac.yaml that deploy/operator/operator.yaml lacks"
                + " (one operator replica elects no leader)").containsExactly("Role " + LEADER);
        assertThat(manifest.stream().filter(o -> o.path("kind").asText().matches("ClusterRole|Role"))
                .filter(o -> GeneratedManifests.named(committed, o.path("kind").asText(), o.at("/metadata/name").asText()) == null)
                .map(o -> o.path("kind").asText() + " " + o.at("/metadata/name").asText()).toList())
                .as("roles of deploy/operator/operator.yaml that deploy/operator/rbac.yaml lacks").isEmpty();
    }

    @Test
    void theChartGrantsTheCommittedRules() throws IOException {
        String helpers = read("helm/oncestream/templates/_helpers.tpl");
        String start = "{{- define \"oncestream.rules\" -}}\n";
        int from = helpers.indexOf(start);
        assertThat(from).as("_helpers.tpl defines oncestream.rules").isNotNegative();
        String rules = helpers.substring(from + start.length(), helpers.indexOf("{{- end -}}", from));
        assertThat(rulesWithNames(GeneratedManifests.tree(rules)))
                .as("oncestream.rules in helm/oncestream/templates/_helpers.tpl differs from the ClusterRole " + OPERATOR
                        + " in deploy/operator/rbac.yaml")
                .isEqualTo(rulesWithNames(GeneratedManifests.named(committedRbac(), "ClusterRole", OPERATOR).path("rules")));

        // The leader-election Role is written out in the chart's rbac.yaml template, after its name.
        String template = read("helm/oncestream/templates/rbac.yaml");
        int leader = template.indexOf("kind: Role\nmetadata:\n  name: {{ include \"oncestream.fullname\" . }}-leader\n");
        assertThat(leader).as("the chart's rbac.yaml template has the leader-election Role").isNotNegative();
        int rulesStart = template.indexOf("\nrules:\n", leader) + 1;
        String leaderRules = template.substring(rulesStart, template.indexOf("\n---\n", rulesStart));
        assertThat(rulesWithNames(GeneratedManifests.tree(leaderRules).path("rules")))
                .as("the leader-election Role in helm/oncestream/templates/rbac.yaml differs from the Role " + LEADER
                        + " in deploy/operator/rbac.yaml")
                .isEqualTo(rulesWithNames(GeneratedManifests.named(committedRbac(), "Role", LEADER).path("rules")));
    }

    private static List<JsonNode> committedRbac() throws IOException {
        return objects(read("deploy/operator/rbac.yaml"));
    }

    private static String read(String file) throws IOException {
        return Files.readString(REPO.resolve(file));
    }
}
