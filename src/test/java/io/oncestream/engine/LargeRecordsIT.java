package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * Records from 10 KB to 2 MB among small ones, rows and dead letters, several in a batch and
 * in Cassandra partitions that share a node: Cassandra refuses a batch that spans partitions
 * above 50 KiB ("Batch too large"), so large rows must never share one; a record over the
 * node's limits (16 MiB a CQL message, and a mutation half the 32 MiB commit-log segment) is
 * refused even alone, and is a bad record, never the end of the job.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class LargeRecordsIT {

    private static final int OVER_MUTATION_LIMIT = 17 << 20;
    private static final Map<String, String> LARGE_MESSAGES = Map.of("max.message.bytes", Integer.toString(24 << 20));

    @Test
    void largeRowsAndDeadLettersAreWrittenAndARowOverTheMutationLimitIsDeadLettered(KafkaBroker kafka,
            CassandraNode cassandra, @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "large-records", 2, LARGE_MESSAGES, 31,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true")
                        .replace("\"maxRecordsPerBatch\": 500", "\"maxRecordsPerBatch\": 60"));
        List<Integer> sizes = List.of(10_000, 30_000, 30_000, -30_000, 30_000, 100_000, 30_000, -60_000, 500_000, 30_000,
                2_000_000, -2_000_000, 30_000, 1_000_000, 30_000, -10_000, 30_000, 30_000);
        job.orders.produce(kafka, job.topic, 100, 0);
        job.orders.produceLarge(kafka, job.topic, sizes);
        job.orders.produce(kafka, job.topic, 100, 0);
        OrderStream.Produced oversized = job.orders.produceLarge(kafka, job.topic, List.of(OVER_MUTATION_LIMIT)).get(0);
        job.orders.markBad(oversized.partition(), oversized.offset());
        job.orders.produceLarge(kafka, job.topic, sizes);
        job.orders.produce(kafka, job.topic, 100, 0);

        try (WorkerProcess worker = job.startWorker(Map.of())) {
            assertThat(worker.waitForExit(Duration.ofMinutes(4))).as(worker.log()).isZero();
            // The byte limits keep every batch within what the node accepts: none was refused and split.
            assertThat(worker.log()).doesNotContain("sending them alone").doesNotContain("Batch too large");
        }

        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
        assertThat(job.deadLetters()).isEqualTo(job.orders.expectedDeadLetters(job.topic));
        List<String> cut = new ArrayList<>();
        for (Row r : cassandra.session().execute("SELECT kafka_partition, kafka_offset, record_value, error FROM "
                + job.keyspace + "." + job.table + "_dead_letters")) {
            int stored = r.getByteBuffer("record_value").remaining();
            String error = r.getString("error");
            if (r.getInt("kafka_partition") == oversized.partition() && r.getLong("kafka_offset") == oversized.offset()) {
                assertThat(error).startsWith("Cassandra refused the row (")
                        .contains("exceeds allowed maximum of 16777216 bytes")
                        .contains("[record_value cut to its first 1048576 of " + oversized.json().length() + " bytes]");
            }
            if (error.contains(" cut to its first ")) {
                assertThat(stored).isEqualTo(1 << 20);
                cut.add(r.getInt("kafka_partition") + "@" + r.getLong("kafka_offset"));
            } else {
                assertThat(stored).isLessThanOrEqualTo(1 << 20);
            }
        }
        // The oversized row and the two malformed records of 2 MB.
        assertThat(cut).hasSize(3);
    }

    @Test
    void inFailModeARowOverTheMutationLimitStopsTheJobNamingTheRecordAndItsSize(KafkaBroker kafka, CassandraNode cassandra,
            @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "large-fail", 1, LARGE_MESSAGES, 32,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true")
                        .replace("\"mode\": \"table\"", "\"mode\": \"fail\""));
        job.orders.produce(kafka, job.topic, 50, 0);
        OrderStream.Produced oversized = job.orders.produceLarge(kafka, job.topic, List.of(OVER_MUTATION_LIMIT)).get(0);

        String log;
        try (WorkerProcess worker = job.startWorker(Map.of())) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).isEqualTo(1);
            log = worker.log();
        }
        assertThat(log).contains("bad record at " + job.topic + "-0 offset " + oversized.offset()
                + ": Cassandra refused the row (").contains("exceeds allowed maximum of 16777216 bytes")
                .contains("value " + oversized.json().length() + " bytes");
        assertThat(job.batchIds("commits")).isEmpty();
        // The batch's other rows may be in the table (the batch is open, and is replayed whole): never a later one.
        assertThat(job.orders.expectedRowsBefore(oversized.offset())).containsAllEntriesOf(job.rows());
    }
}
