package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
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

/** A running worker while Cassandra is stopped for 30+ s, and while the Kafka broker restarts. */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class EngineOutageIT {

    @Test
    void cassandraDownCommitsNothingAndTheWorkerResumesByItself(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir)
            throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "sink-outage", 3, 11, json -> json);
        job.orders.produce(kafka, job.topic, 1000, 0);
        try (WorkerProcess worker = job.startWorker(Map.of())) {
            awaitCaughtUp(worker, 1000);
            cassandra.stop();
            try {
                job.orders.produce(kafka, job.topic, 1000, 0);
                Awaits.until(Duration.ofMinutes(2), "WAITING_FOR_SINK in /progress", () -> {
                    JsonNode p = worker.progress();
                    return p != null && p.path("state").asText().equals("WAITING_FOR_SINK");
                });
                List<Long> commitsWhenDown = job.batchIds("commits");
                long committedWhenDown = worker.progress().path("batchId").asLong();
                Thread.sleep(30_000); // the fault's duration, not a synchronization: the outage lasts at least 30 s
                JsonNode during = worker.progress();
                assertThat(during.path("state").asText()).isEqualTo("WAITING_FOR_SINK");
                assertThat(during.path("sinkAvailable").asBoolean()).isFalse();
                assertThat(during.path("lastError").asText()).startsWith("Cassandra: ");
                assertThat(during.path("batchId").asLong()).isEqualTo(committedWhenDown);
                assertThat(job.batchIds("commits")).as("nothing is committed while Cassandra is down").isEqualTo(commitsWhenDown);
            } finally {
                cassandra.start();
            }
            // What the node said before the outage is kept beside this run's log (cassandra.sh start).
            assertThat(cassandra.logFile("system.log.1")).as("the log of the run before the restart")
                    .content().contains("Starting listening for CQL clients");
            assertThat(cassandra.logFile("system.log")).content().contains("Starting listening for CQL clients");
            awaitCaughtUp(worker, 2000);
            assertThat(worker.progress().path("sinkAvailable").asBoolean()).isTrue();
            assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM (128 + 15)").isEqualTo(143);
            assertThat(worker.log()).contains("writes failed, retrying");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }

    @Test
    void kafkaBrokerRestartLosesAndDuplicatesNothing(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir)
            throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "source-restart", 3, 12, json -> json);
        job.orders.produce(kafka, job.topic, 1000, 0);
        try (WorkerProcess worker = job.startWorker(Map.of())) {
            awaitCaughtUp(worker, 1000);
            kafka.restart();
            job.orders.produce(kafka, job.topic, 1000, 0);
            awaitCaughtUp(worker, 2000);
            // The lag probe's first reading after the broker came back (it runs every 5 s).
            Awaits.until(Duration.ofSeconds(60), "the lag probe reading Kafka again", () -> {
                JsonNode lag = worker.progress().path("lag").path("partitions");
                return lag.size() == 3 && worker.progress().path("sourceAvailable").asBoolean();
            });

            JsonNode progress = worker.progress();
            assertThat(progress.path("jobId").asText()).isEqualTo("it/source-restart");
            assertThat(progress.path("totals").path("read").asLong()).isEqualTo(2000);
            assertThat(progress.path("lastBatch").path("durationsMs").path("total").isNumber()).isTrue();
            assertThat(progress.path("partitions")).hasSize(3);
            assertThat(progress.path("lag").path("partitions").path(job.topic + "-0").path("exact").asBoolean())
                    .as("its own partitions' lag, from its checkpoint").isTrue();
            assertThat(worker.get("/healthz/live").statusCode()).isEqualTo(200);
            assertThat(worker.get("/healthz/ready").statusCode()).isEqualTo(200);
            String metrics = worker.get("/metrics").body();
            assertThat(metrics).contains("oncestream_records_read_total{job_id=\"it/source-restart\",worker=\"0\"} 2000")
                    .contains("oncestream_sink_available{job_id=\"it/source-restart\",worker=\"0\"} 1")
                    .contains("oncestream_batch_duration_seconds_count{job_id=\"it/source-restart\",worker=\"0\"} ");
            io.oncestream.testing.MetricsDoc.check("worker", metrics);
            // SIGTERM: the worker stops at a safe point, well within a pod's grace period.
            assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM (128 + 15)").isEqualTo(143);
            assertThat(worker.log()).contains("worker finished: STOPPED");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }

    /**
     * A worker started while Cassandra is down says so: {@code WAITING_FOR_SINK}, not available,
     * the driver's error, and where its checkpoint stands (the last committed batch and its
     * offsets, read before connecting); it starts by itself when Cassandra is back.
     */
    @Test
    void aWorkerStartedWhileCassandraIsDownTellsTheTruth(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir)
            throws Exception {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "start-sink-down", 3, 13, json -> json);
        job.orders.produce(kafka, job.topic, 600, 0);
        JsonNode before;
        try (WorkerProcess first = job.startWorker(Map.of())) {
            awaitCaughtUp(first, 600);
            before = first.progress();
            assertThat(first.terminate(Duration.ofSeconds(30))).isEqualTo(143);
        }
        job.orders.produce(kafka, job.topic, 400, 0);
        cassandra.stop();
        try (WorkerProcess worker = job.startWorker(Map.of())) {
            try {
                assertWaitingForCassandra(worker, job, before);
            } finally {
                cassandra.start();
            }
            awaitCaughtUp(worker, 1000);
            assertThat(worker.progress().path("sinkAvailable").asBoolean()).isTrue();
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }

    private static void assertWaitingForCassandra(WorkerProcess worker, EngineFixture job, JsonNode before) {
        Awaits.until(Duration.ofMinutes(1), "WAITING_FOR_SINK in /progress of a worker started without Cassandra", () -> {
            JsonNode p = worker.progress();
            return p != null && p.path("state").asText().equals("WAITING_FOR_SINK");
        });
        JsonNode waiting = worker.progress();
        System.out.println("[engine] started without Cassandra: state " + waiting.path("state").asText() + ", batchId "
                + waiting.path("batchId") + ", lastError " + waiting.path("lastError").asText());
        assertThat(waiting.path("sinkAvailable").asBoolean()).isFalse();
        assertThat(waiting.path("lastError").asText()).startsWith("Cassandra: ");
        assertThat(waiting.path("batchId").asLong()).as("the committed batch, from the checkpoint")
                .isEqualTo(before.path("batchId").asLong()).isGreaterThanOrEqualTo(0);
        for (String partition : List.of(job.topic + "-0", job.topic + "-1", job.topic + "-2")) {
            assertThat(waiting.at("/partitions/" + partition + "/committed").asLong()).as(partition)
                    .isEqualTo(before.at("/partitions/" + partition + "/committed").asLong());
        }
        assertThat(job.batchIds("commits")).as("nothing committed meanwhile").last().isEqualTo(before.path("batchId").asLong());
    }

    /** Waits until the worker has committed {@code records} records in total (all partitions at their end). */
    static void awaitCaughtUp(WorkerProcess worker, long records) {
        Awaits.until(Duration.ofMinutes(3), "the worker to commit " + records + " records", () -> {
            JsonNode p = worker.progress();
            if (p == null) {
                return false;
            }
            long committed = 0;
            for (JsonNode partition : p.path("partitions")) {
                committed += partition.path("committed").asLong();
            }
            return committed >= records;
        });
    }
}
