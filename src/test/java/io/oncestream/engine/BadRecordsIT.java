package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/** Malformed JSON and records missing a field: dead-lettered, or the job fails, as configured; nothing lost. */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class BadRecordsIT {

    @Test
    void badRecordsGoToTheDeadLetterTableAndCountsMatch(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir)
            throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "dead-letter", 2, 21,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        List<OrderStream.Produced> produced = job.orders.produce(kafka, job.topic, 1200, 37);
        long bad = produced.stream().filter(OrderStream.Produced::bad).count();
        assertThat(bad).isEqualTo(1200 / 37);

        try (WorkerProcess worker = job.startWorker(Map.of())) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).as(worker.log()).isZero();
        }

        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
        assertThat(job.deadLetters()).isEqualTo(job.orders.expectedDeadLetters(job.topic));
        // Each kind of bad record with the error that names its cause (the filter's fields are
        // also answered without CEL's interpreter where that is certain: these go to CEL).
        Map<String, String> errors = deadLetterErrors(cassandra, job);
        for (OrderStream.Produced p : produced) {
            if (p.bad()) {
                String error = errors.get(p.partition() + "@" + p.offset());
                String json = p.json();
                if (!json.endsWith("}")) {
                    assertThat(error).as(json).startsWith("value is not valid JSON");
                } else if (!json.contains("\"customer\"")) {
                    assertThat(error).as(json).contains("customer");
                } else if (!json.contains("\"amount\"")) {
                    assertThat(error).as(json).startsWith("filter: ").contains("amount");
                } else {
                    assertThat(json).contains("\"amount\": \"500\"");
                    assertThat(error).as(json).startsWith("filter: ").contains("_>_");
                }
            }
        }
        long missingButFiltered = produced.stream().filter(p -> !p.bad() && !p.json().contains("\"customer\"")).count();
        assertThat(missingButFiltered).isEqualTo(1200 / 37);
        long read = 0;
        long filtered = 0;
        long deadLettered = 0;
        for (long id : job.batchIds("commits")) {
            io.oncestream.engine.checkpoint.BatchCommit commit = job.commit(id);
            read += commit.recordsRead();
            filtered += commit.recordsFiltered();
            deadLettered += commit.deadLettered();
        }
        assertThat(read).isEqualTo(1200);
        assertThat(deadLettered).isEqualTo(bad);
        assertThat(filtered).isEqualTo(produced.stream().filter(p -> !p.bad() && !(p.status().equals("PAID") && p.amount() > 100)).count());
    }

    /**
     * {@code restart.onFailure: Backoff}: a continuous worker that failed on a bad record reports
     * FAILED with the cause and when it tries again, and starts its engine again 10 s later
     * (failing on the same record again); its checkpoint and the table stay where they were.
     */
    @Test
    void withRestartBackoffAFailedWorkerStartsAgainAfterItsPause(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "fail-backoff", 1, 23,
                json -> json.replace("\"mode\": \"table\"", "\"mode\": \"fail\"")
                        .replace("\"trigger\": {\"intervalMs\": 200}",
                                "\"trigger\": {\"intervalMs\": 200}, \"restart\": {\"onFailure\": \"Backoff\", \"maxBackoffMs\": 20000}"));
        job.orders.produce(kafka, job.topic, 50, 0);
        job.orders.produce(kafka, job.topic, 1, 1); // offset 50: a bad record

        try (WorkerProcess worker = job.startWorker(Map.of())) {
            String failure = "job failed: bad record at " + job.topic + "-0 offset 50: ";
            worker.awaitOutput(failure, Duration.ofMinutes(2));
            JsonNode progress = worker.progress();
            assertThat(progress.path("state").asText()).isEqualTo("FAILED");
            assertThat(progress.path("lastError").asText()).startsWith("bad record at " + job.topic + "-0 offset 50: ")
                    .contains("(restart.onFailure: Backoff; starting again in 10 s, at 20");
            long first = System.nanoTime();
            io.oncestream.testing.Awaits.until(Duration.ofSeconds(60), "the engine to start again and fail again",
                    () -> worker.log().split(java.util.regex.Pattern.quote(failure), -1).length - 1 >= 2);
            assertThat((System.nanoTime() - first) / 1e9).as("seconds between the two starts").isGreaterThan(9.0);
            assertThat(worker.isAlive()).isTrue();
        }
        assertThat(job.batchIds("commits")).isEmpty();
        assertThat(job.orders.expectedRowsBefore(50)).containsAllEntriesOf(job.rows());
    }

    /** {@code partition@offset -> error} of the job's dead-letter table. */
    private static Map<String, String> deadLetterErrors(CassandraNode cassandra, EngineFixture job) {
        Map<String, String> errors = new HashMap<>();
        for (var row : cassandra.session().execute("SELECT kafka_partition, kafka_offset, error FROM " + job.keyspace + "."
                + job.table + "_dead_letters")) {
            errors.put(row.getInt("kafka_partition") + "@" + row.getLong("kafka_offset"), row.getString("error"));
        }
        return errors;
    }

    @Test
    void failModeStopsAtTheBadRecordAndNamesIt(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "fail-mode", 1, 22,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true")
                        .replace("\"mode\": \"table\"", "\"mode\": \"fail\"")
                        .replace("\"maxRecordsPerBatch\": 500", "\"maxRecordsPerBatch\": 100"));
        job.orders.produce(kafka, job.topic, 400, 0);
        assertThat(job.orders.produce(kafka, job.topic, 1, 1).get(0).offset()).isEqualTo(400); // a bad record
        job.orders.produce(kafka, job.topic, 99, 0);

        String log;
        try (WorkerProcess worker = job.startWorker(Map.of())) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).isEqualTo(1);
            log = worker.log();
        }
        assertThat(log).contains("bad record at " + job.topic + "-0 offset 400: ");
        // Batches 0-3 (offsets 0-399) are committed; batch 4 holds the bad record and is not.
        assertThat(job.batchIds("commits")).containsExactly(0L, 1L, 2L, 3L);
        assertThat(job.batchIds("offsets")).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(job.rows()).isEqualTo(job.orders.expectedRowsBefore(400));
    }
}
