package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.WorkerProcess;

/** The packaged application's {@code worker} entry point (what the image runs) moves a topic into a table exactly. */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class PackagedWorkerIT {

    @Test
    void quarkusRunJarWorkerDrainsATopic(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        Path runner = LocalService.repoDir().resolve("target/quarkus-app/quarkus-run.jar");
        assertThat(runner).as("mvn package builds the runner jar").exists();
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "packaged", 2, 31,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        job.orders.produce(kafka, job.topic, 800, 0);

        try (WorkerProcess worker = job.startPackagedWorker(runner)) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).as(worker.log()).isZero();
            assertThat(worker.log()).contains("worker finished: COMPLETED");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }

    @Test
    void aFilterThatDoesNotCompileFailsTheWorkerNamingTheField(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        // The worker compiles its expressions on a thread of its own while the driver connects;
        // the error still reaches the log, the exit code and the field's name.
        Path runner = LocalService.repoDir().resolve("target/quarkus-app/quarkus-run.jar");
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "packaged-bad-filter", 1, 31,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true")
                        .replace("value.status == 'PAID' && value.amount > 100", "value.status == 'PAID' &&"));
        assertThat(job.config).content().contains("value.status == 'PAID' &&\"");

        try (WorkerProcess worker = job.startPackagedWorker(runner)) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).as(worker.log()).isEqualTo(1);
            assertThat(worker.log()).contains("job failed: filter: CEL expression does not compile");
        }
        assertThat(job.rows()).isEmpty();
    }
}
