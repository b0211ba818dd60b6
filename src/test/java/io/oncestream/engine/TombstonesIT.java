package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * Kafka tombstones through a real worker with {@code tombstones: delete} and the primary key
 * mapped from the record key, as on a compacted topic: each tombstone deletes its order's row,
 * an order produced after it writes the row again, and a worker killed mid-batch and restarted
 * replays deletes and upserts with the same timestamps: the table equals the in-order result.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class TombstonesIT {

    @Test
    void tombstonesDeleteTheirRowsExactlyAcrossAKill(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "tombstones", 3, 23, json -> json
                .replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true")
                .replace("\"order_id\": \"value.id\"", "\"order_id\": \"key\"")
                .replace("\"format\": \"json\"", "\"format\": \"json\", \"tombstones\": \"delete\"")
                .replace("\"maxRecordsPerBatch\": 500", "\"maxRecordsPerBatch\": 200"));
        job.orders.produce(kafka, job.topic, 800, 0);
        List<String> deleted = List.of("o1", "o2", "o3", "o5", "o8", "o13", "o21", "o34");
        job.orders.produceTombstones(kafka, job.topic, deleted);
        job.orders.produce(kafka, job.topic, 400, 0);
        job.orders.produceTombstones(kafka, job.topic, List.of("o1", "o55"));
        Map<String, String> expected = job.orders.expectedRows();
        assertThat(deleted).as("deleted ids written again by a later order, and not").anyMatch(expected::containsKey)
                .anyMatch(id -> !expected.containsKey(id));

        try (WorkerProcess first = job.startWorker(Map.of("ONCESTREAM_TEST_PAUSE_AT", ProtocolStep.MID_WRITE + ":3"))) {
            first.awaitOutput("ONCESTREAM-TEST-PAUSED " + ProtocolStep.MID_WRITE + " 3", Duration.ofMinutes(3));
            first.kill9();
        }
        try (WorkerProcess second = job.startWorker(Map.of())) {
            assertThat(second.waitForExit(Duration.ofMinutes(3))).as(second.log()).isZero();
            assertThat(second.log()).contains("replaying open batch 3");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
        assertThat(job.deadLetters()).isEmpty();
    }
}
