package io.oncestream.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;

/**
 * The Kubernetes manifests that the build generates under {@code target/kubernetes} (the
 * StreamJob CRD, the operator's ServiceAccount and RBAC), how the committed files are made from
 * them ({@code crds/}, {@code deploy/operator/rbac.yaml}), and YAML documents read as objects so
 * that copies can be compared. See CONTRIBUTING.md, "Changing the StreamJob CRD".
 */
public final class GeneratedManifests {

    /** The order of {@code kubectl get sj}'s columns after NAME. */
    public static final List<String> COLUMNS = List.of("Phase", "Batch", "Lag", "Lag-Seconds", "Rate", "Age");
    /** The CRD as the build generates it. */
    public static final String CRD = "target/kubernetes/streamjobs.oncestream.io-v1.yml";
    /** Everything else the build generates: ServiceAccount, RBAC, Deployment. */
    public static final String MANIFESTS = "target/kubernetes/kubernetes.yml";

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private GeneratedManifests() {
    }

    /**
     * The committed CRD made from the generated one: the same YAML with the entries of each
     * {@code additionalPrinterColumns} list in {@link #COLUMNS} order (the generator sorts them by
     * name; {@code kubectl get streamjobs} shows them in the conventional order, AGE last).
     */
    public static String crdWithColumnsInOrder(String crd) {
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
            entries.sort(Comparator.comparingInt(GeneratedManifests::rank));
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

    /**
     * The committed {@code deploy/operator/rbac.yaml} made from the generated manifests: its
     * {@code header} comment, then the ServiceAccount, ClusterRole(s), Role(s) and bindings.
     */
    public static String rbacFile(String manifests, String header) {
        return header + Arrays.stream(manifests.split("(?m)^---\n"))
                .filter(doc -> doc.matches("(?s).*(?m)^kind: (ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)$.*"))
                .map(doc -> "---\n" + doc)
                .collect(Collectors.joining());
    }

    /** The comment lines before the first document of a committed YAML file. */
    public static String header(String committed) {
        return committed.substring(0, committed.indexOf("---\n"));
    }

    /** The objects of a multi-document YAML text, each with a {@code kind}. */
    public static List<JsonNode> objects(String yaml) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (YAMLParser parser = (YAMLParser) YAML.getFactory().createParser(yaml)) {
            for (var it = YAML.readValues(parser, JsonNode.class); it.hasNext();) {
                JsonNode node = it.next();
                if (node != null && !node.isNull() && !node.isMissingNode() && node.has("kind")) {
                    out.add(node);
                }
            }
        }
        return out;
    }

    /** The one object of {@code kind} among {@code objects}. */
    public static JsonNode only(List<JsonNode> objects, String kind) {
        List<JsonNode> found = objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " objects of kind " + kind + ", expected one");
        }
        return found.get(0);
    }

    /** The rules of the objects of {@code kind}, as "group resource verb" lines. */
    public static Set<String> rules(List<JsonNode> objects, String kind) {
        Set<String> out = new TreeSet<>();
        for (JsonNode o : objects) {
            if (o.path("kind").asText().equals(kind)) {
                out.addAll(rules(o.path("rules")));
            }
        }
        return out;
    }

    /**
     * A list of RBAC rules as "group resource verb" lines, without the resource names (which
     * follow the release's name).
     */
    public static Set<String> rules(JsonNode rules) {
        Set<String> out = new TreeSet<>();
        for (JsonNode rule : rules) {
            for (JsonNode group : rule.path("apiGroups")) {
                for (JsonNode resource : rule.path("resources")) {
                    for (JsonNode verb : rule.path("verbs")) {
                        out.add(group.asText() + " " + resource.asText() + " " + verb.asText());
                    }
                }
            }
        }
        return out;
    }

    /** A list of RBAC rules as "group resource verb" lines, each with its resource names, if any, as "resource/name". */
    public static Set<String> rulesWithNames(JsonNode rules) {
        Set<String> out = new TreeSet<>();
        for (JsonNode rule : rules) {
            List<String> resources = new ArrayList<>();
            for (JsonNode resource : rule.path("resources")) {
                if (rule.path("resourceNames").isEmpty()) {
                    resources.add(resource.asText());
                }
                rule.path("resourceNames").forEach(name -> resources.add(resource.asText() + "/" + name.asText()));
            }
            for (JsonNode group : rule.path("apiGroups")) {
                for (String resource : resources) {
                    for (JsonNode verb : rule.path("verbs")) {
                        out.add(group.asText() + " " + resource + " " + verb.asText());
                    }
                }
            }
        }
        return out;
    }

    /** The object of {@code kind} named {@code name} among {@code objects}, or null. */
    public static JsonNode named(List<JsonNode> objects, String kind, String name) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind) && o.at("/metadata/name").asText().equals(name))
                .findFirst().orElse(null);
    }

    /** A YAML text (one document) as a tree. */
    public static JsonNode tree(String yaml) throws IOException {
        return YAML.readTree(yaml);
    }
}
