package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.contract.Durations;
import io.oncestream.contract.JobDefaults;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.testing.LocalService;

/**
 * One set of defaults: a StreamJob as the API server stores it (the committed CRD's defaults
 * applied) runs exactly as the same StreamJob read before defaulting, and both run as a worker
 * configuration file that names only the required fields.
 */
class JobDefaultsTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final WorkerSettings SETTINGS = new WorkerSettings("oncestream/oncestream:0.1.0", "IfNotPresent", 30);

    /** Only what the CRD requires, plus the optional objects whose fields have defaults, left empty. */
    private static final String MINIMAL = """
            {"apiVersion": "oncestream.io/v1alpha1", "kind": "StreamJob",
             "metadata": {"name": "orders", "namespace": "shop", "uid": "u-1", "generation": 1},
             "spec": {"source": {"kafka": {"bootstrapServers": "kafka:9092", "topics": ["orders"]}},
                      "sink": {"cassandra": {"contactPoints": ["cassandra:9042"], "localDatacenter": "dc1",
                                             "keyspace": "shop", "table": "orders", "columns": {"id": "value.id"}}},
                      "deadLetter": {}, "trigger": {}, "checkpoint": {}}}
            """;

    @Test
    void theCrdsDefaultsAreTheWorkersDefaults() throws IOException {
        ObjectNode undefaulted = (ObjectNode) JSON.readTree(MINIMAL);
        ObjectNode defaulted = undefaulted.deepCopy();
        List<String> applied = new ArrayList<>();
        applyDefaults(crdSpecSchema(), (ObjectNode) defaulted.get("spec"), "spec", applied);
        assertThat(applied).as("defaults the CRD declares").hasSizeGreaterThanOrEqualTo(12)
                .contains("spec.trigger.interval", "spec.source.kafka.maxRecordsPerBatch", "spec.checkpoint.retainBatches");

        StreamJob stored = Serialization.unmarshal(defaulted.toString(), StreamJob.class);
        StreamJob unstored = Serialization.unmarshal(undefaulted.toString(), StreamJob.class);
        JobConfig fromStored = WorkerJobConfigs.from(stored);
        assertThat(WorkerJobConfigs.from(unstored)).isEqualTo(fromStored);
        assertThat(WorkerStatefulSets.desired(unstored, SETTINGS, "h", false))
                .isEqualTo(WorkerStatefulSets.desired(stored, SETTINGS, "h", false));

        JobConfig workerOnly = JobConfigs.parse("""
                {"jobId": "shop/orders", "source": {"bootstrapServers": "kafka:9092", "topics": ["orders"]},
                 "sink": {"contactPoints": ["cassandra:9042"], "localDatacenter": "dc1", "keyspace": "shop",
                          "table": "orders", "columns": {"id": "value.id"}}}
                """);
        assertThat(fromStored).isEqualTo(workerOnly);
        assertThat(workerOnly.source().groupId()).isEqualTo(JobDefaults.groupId("shop/orders")).isEqualTo("oncestream-shop.orders");
        assertThat(workerOnly.trigger().intervalMs()).isEqualTo(Durations.millis(JobDefaults.TRIGGER_INTERVAL));
    }

    @Test
    void aDefaultThatDiffersIsCaught() throws IOException {
        // The comparison above is not vacuous: one changed default makes the configurations differ.
        ObjectNode job = (ObjectNode) JSON.readTree(MINIMAL);
        ((ObjectNode) job.at("/spec/trigger")).put("interval", "2s");
        JobConfig changed = WorkerJobConfigs.from(Serialization.unmarshal(job.toString(), StreamJob.class));
        JobConfig unchanged = WorkerJobConfigs.from(Serialization.unmarshal(MINIMAL, StreamJob.class));
        assertThat(changed).isNotEqualTo(unchanged);
    }

    private static JsonNode crdSpecSchema() throws IOException {
        JsonNode crd = YAML.readTree(Files.readString(LocalService.repoDir().resolve("crds/streamjobs.oncestream.io-v1.yml")));
        return crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec");
    }

    /** What the API server does on write: a missing field of an object that is present gets its default. */
    private static void applyDefaults(JsonNode schema, ObjectNode object, String path, List<String> applied) {
        for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
            String name = property.getKey();
            JsonNode propertySchema = property.getValue();
            if (!object.has(name) && propertySchema.has("default")) {
                object.set(name, propertySchema.get("default"));
                applied.add(path + "." + name);
            }
            if (object.get(name) instanceof ObjectNode child) {
                applyDefaults(propertySchema, child, path + "." + name, applied);
            }
        }
    }
}
