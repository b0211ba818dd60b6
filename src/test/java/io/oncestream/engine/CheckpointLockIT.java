package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * The checkpoint's lock held by another live process (this test's JVM, standing in for the JVM
 * of a force-deleted pod that is still being killed): the worker waits and says so, with the
 * holder its lock file names, starts as soon as the lock is released, and the table is exact;
 * held for longer than {@code --lock-wait}, the worker exits with code 3 to be restarted.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class CheckpointLockIT {

    private static final String HOLDER = "pid 4242 on host paid-orders-0 since 2026-12-05T16:40:00Z";

    @Test
    void aWorkerWaitsForALockHeldByAnotherProcessAndStartsWhenItIsReleased(KafkaBroker kafka, CassandraNode cassandra,
            @TempDir Path dir) throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "lock-wait", 2, 41,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        job.orders.produce(kafka, job.topic, 600, 0);

        WorkerProcess worker;
        try (FileChannel channel = lockFile(job.checkpoint); FileLock lock = channel.lock()) {
            long locked = System.nanoTime();
            channel.write(ByteBuffer.wrap((HOLDER + "\n").getBytes(StandardCharsets.UTF_8)));
            worker = job.startWorker(Map.of());
            JsonNode[] seen = new JsonNode[1];
            Awaits.until(Duration.ofSeconds(60), "the worker to report the held lock", () -> {
                seen[0] = worker.progress();
                return seen[0] != null && "WAITING_FOR_CHECKPOINT_LOCK".equals(seen[0].path("state").asText());
            });
            assertThat(seen[0].path("lastError").asText()).contains(job.checkpoint.resolve(".lock").toString())
                    .contains("in use by another worker process (" + HOLDER + ")").contains("; waiting since 20");
            assertThat(worker.get("/healthz/ready").statusCode()).as("ready while waiting").isEqualTo(503);
            // The other process holds the lock for 30 s in all (the scenario, not a synchronization).
            Thread.sleep(Math.max(0, 30_000 - (System.nanoTime() - locked) / 1_000_000));
            assertThat(worker.isAlive()).isTrue();
            assertThat(worker.progress().path("state").asText()).isEqualTo("WAITING_FOR_CHECKPOINT_LOCK");
            assertThat(job.checkpoint.resolve("metadata")).as("nothing written while another holds the lock").doesNotExist();
        }

        try (worker) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).as(worker.log()).isZero();
            assertThat(worker.log()).contains("checkpoint lock acquired after waiting");
            assertThat(Files.readString(job.checkpoint.resolve(".lock"))).as("the lock file names its last holder")
                    .startsWith("pid " + worker.pid() + " on host ");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }

    /**
     * On a checkpoint with committed batches: while it waits, the worker reports what they
     * committed (read without the lock), so the job's status keeps its batch and offsets; held
     * longer than {@code --lock-wait}, the lock ends the worker with code 3.
     */
    @Test
    void aLockHeldLongerThanTheWorkerWaitsEndsItWithCodeThree(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir)
            throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "lock-expired", 1, 42,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        job.orders.produce(kafka, job.topic, 1200, 0);
        try (WorkerProcess first = job.startWorker(Map.of())) {
            assertThat(first.waitForExit(Duration.ofMinutes(3))).as(first.log()).isZero();
        }
        long lastBatch = job.batchIds("commits").get(job.batchIds("commits").size() - 1);

        try (FileChannel channel = lockFile(job.checkpoint); FileLock lock = channel.lock()) {
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((HOLDER + "\n").getBytes(StandardCharsets.UTF_8)));
            try (WorkerProcess worker = job.startWorker(Map.of(), List.of("--lock-wait", "5"))) {
                JsonNode[] seen = new JsonNode[1];
                Awaits.until(Duration.ofSeconds(60), "the worker to report the held lock", () -> {
                    seen[0] = worker.progress();
                    return seen[0] != null && "WAITING_FOR_CHECKPOINT_LOCK".equals(seen[0].path("state").asText());
                });
                assertThat(seen[0].path("batchId").asLong()).as("the last committed batch, while waiting").isEqualTo(lastBatch);
                assertThat(seen[0].path("partitions").path(job.topic + "-0").path("committed").asLong()).isEqualTo(1200);
                assertThat(worker.waitForExit(Duration.ofMinutes(1))).as(worker.log()).isEqualTo(3);
                assertThat(worker.log()).contains("(" + HOLDER + "); gave up after waiting 5 s")
                        .contains("exiting to be restarted");
            }
        }
    }

    private static FileChannel lockFile(Path checkpoint) throws IOException {
        Files.createDirectories(checkpoint);
        return FileChannel.open(checkpoint.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }
}
