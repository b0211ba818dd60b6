package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * The files of a mounted Kafka Secret (ONCESTREAM_KAFKA_SECRET_DIR, how the operator passes
 * spec.source.kafka.secretRef) become properties of the worker's real Kafka client: SASL
 * settings against the broker's plaintext listener keep the worker from reaching Kafka, and
 * nothing is written; the same job with harmless settings drains the topic exactly.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class KafkaSecretsIT {

    @Test
    void secretPropertiesReachTheKafkaClient(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "secret", 1, 41,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        job.orders.produce(kafka, job.topic, 300, 0);

        Path sasl = Files.createDirectories(dir.resolve("sasl-secret"));
        Files.writeString(sasl.resolve("security.protocol"), "SASL_PLAINTEXT");
        Files.writeString(sasl.resolve("sasl.mechanism"), "PLAIN");
        Files.writeString(sasl.resolve("sasl.jaas.config"),
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";");
        Files.writeString(sasl.resolve("default.api.timeout.ms"), "3000");
        try (WorkerProcess worker = job.startWorker(Map.of("ONCESTREAM_KAFKA_SECRET_DIR", sasl.toString()))) {
            worker.awaitOutput("Kafka unavailable, retrying", Duration.ofSeconds(60));
            assertThat(worker.progress().path("sourceAvailable").asBoolean()).isFalse();
            assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM (128 + 15)").isEqualTo(143);
            assertThat(worker.log()).contains("worker finished: STOPPED");
        }
        assertThat(job.rows()).as("nothing written while Kafka could not be read").isEmpty();
        assertThat(job.batchIds("offsets")).isEmpty();

        Path plain = Files.createDirectories(dir.resolve("plain-secret"));
        Files.writeString(plain.resolve("client.id"), "oncestream-secret-it");
        try (WorkerProcess worker = job.startWorker(Map.of("ONCESTREAM_KAFKA_SECRET_DIR", plain.toString()))) {
            assertThat(worker.waitForExit(Duration.ofMinutes(2))).as(worker.log()).isZero();
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }
}
