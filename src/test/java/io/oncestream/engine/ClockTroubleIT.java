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
 * Records whose Kafka timestamps are days in the past, a day in the future, or equal to the one
 * before, through a worker killed with SIGKILL halfway through writing a batch and started
 * again: each partition's write timestamps ({@code max(previous + 1, record timestamp)}) still
 * rise in offset order, the replay gives every record the timestamp it had, and the table is
 * the last passing record of each order in offset order (docs/protocol.md, section 8).
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class ClockTroubleIT {

    private static final long DAY_MS = 86_400_000L;

    @Test
    void timestampsInThePastTheFutureAndEqualOnesLeaveTheTableInOffsetOrderAcrossACrash(KafkaBroker kafka,
            CassandraNode cassandra, @TempDir Path dir) {
        long now = System.currentTimeMillis();
        // By sequence number: a day ahead, ten days back, the same as a fixed instant, or now + seq.
        java.util.function.LongUnaryOperator clock = seq -> switch ((int) (seq % 7)) {
            case 0 -> now + DAY_MS;
            case 3 -> now - 10 * DAY_MS;
            case 5, 6 -> now - DAY_MS;
            default -> now + seq;
        };
        // Kafka 4 refuses CreateTime more than an hour ahead unless the topic allows it, and its
        // retention would delete records ten days old: this topic keeps them all.
        Map<String, String> anyTime = Map.of("message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE), "retention.ms", "-1");
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, "clock", 2, anyTime, 61,
                json -> json.replace("\"intervalMs\": 200", "\"intervalMs\": 0"));
        job.orders.produce(kafka, job.topic, 1500, 0, clock);
        assertThat(job.orders.eventsPerOrder().values()).as("orders repeat within and across batches").allMatch(n -> n >= 2);

        try (WorkerProcess first = job.startWorker(Map.of("ONCESTREAM_TEST_PAUSE_AT", "MID_WRITE:1"))) {
            first.awaitOutput("ONCESTREAM-TEST-PAUSED MID_WRITE 1", Duration.ofMinutes(3));
            first.kill9();
        }
        job.editConfig(json -> json.replace("\"intervalMs\": 0", "\"intervalMs\": 0, \"availableNow\": true"));
        try (WorkerProcess second = job.startWorker(Map.of())) {
            assertThat(second.waitForExit(Duration.ofMinutes(4))).as(second.log()).isZero();
            assertThat(second.log()).contains("replaying open batch 1");
        }
        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
    }
}
