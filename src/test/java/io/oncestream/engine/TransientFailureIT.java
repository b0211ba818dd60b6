package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

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
 * A failure nobody foresaw (an unexpected exception, injected once after batch 1 was written
 * and before it was committed) is transient: the worker does not fail the job but starts its
 * engine again after a pause, replays the open batch with its recorded ranges, and the table
 * is exact.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class TransientFailureIT {

    @Test
    void anUnexpectedFailureRestartsTheEngineAndTheReplayIsExact(KafkaBroker kafka, CassandraNode cassandra, @TempDir Path dir) {
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "transient", 2, 51,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0, \"availableNow\": true"));
        job.orders.produce(kafka, job.topic, 1500, 0);

        try (WorkerProcess worker = job.startWorker(Map.of("ONCESTREAM_TEST_FAIL_AT", "AFTER_SINK:1"))) {
            assertThat(worker.waitForExit(Duration.ofMinutes(3))).as(worker.log()).isZero();
            assertThat(worker.log()).contains("transient failure, starting again in 1000 ms: test failure injected at"
                    + " AFTER_SINK of batch 1").contains("replaying open batch 1").doesNotContain("job failed");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
        assertThat(job.batchIds("commits")).contains(0L, 1L, 2L);
    }
}
