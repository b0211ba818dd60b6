package io.oncestream.operator.model;

import java.io.IOException;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;

/**
 * The worker configuration in a job's ConfigMap is API (a worker of another release reads it, and
 * its hash rolls the pods when it changes): a StreamJob that sets every field the worker sees, and
 * one that sets only the required ones, map to the committed files under
 * {@code src/test/resources/formats/} byte for byte.
 */
class WorkerConfigFormatTest {

    private static final String EVERY_FIELD = CommittedFormats.METADATA + """
            spec:
              source:
                kafka:
                  bootstrapServers: "kafka-0:9092,kafka-1:9092"
                  topics: [orders, refunds]
                  startingOffsets: latest
                  maxRecordsPerBatch: 1000
                  failOnDataLoss: false
                  properties: {security.protocol: SSL, client.rack: r1}
                  secretRef: {name: kafka-creds}
              format: string
              filter: "value != ''"
              tombstones: delete
              sink:
                cassandra:
                  contactPoints: ["cassandra-0:9042", "cassandra-1:9042"]
                  localDatacenter: dc1
                  keyspace: shop
                  table: orders
                  consistency: QUORUM
                  columns: {id: key, body: value}
                  secretRef: {name: cassandra-creds}
              deadLetter: {mode: table, table: orders_dead}
              trigger: {interval: 1m30s, availableNow: true}
              parallelism: 3
              checkpoint: {size: 2Gi, retainBatches: 7}
              restartPolicy: {onFailure: Backoff, maxBackoff: 2h30m}
            """;

    @Test
    void aJobWithEveryFieldMapsToTheCommittedConfiguration() throws IOException {
        assertMapsTo(EVERY_FIELD, "worker-config-every-field.json");
    }

    @Test
    void aJobWithOnlyTheRequiredFieldsMapsToTheCommittedConfiguration() throws IOException {
        assertMapsTo(CommittedFormats.REQUIRED_ONLY, "worker-config-required-only.json");
    }

    private static void assertMapsTo(String yaml, String file) throws IOException {
        StreamJob job = Serialization.unmarshal(yaml, StreamJob.class);
        String written = WorkerConfigMaps.desired(job, WorkerJobConfigs.from(job)).getData().get(StreamJobResources.CONFIG_KEY);
        CommittedFormats.assertMatches(written, file, "the ConfigMap's configuration");
    }
}
