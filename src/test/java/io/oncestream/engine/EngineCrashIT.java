package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * kill -9 of a real worker process at each step of the protocol, then a restart: the table
 * equals the expectation computed from the produced records, the open batch is replayed with
 * the range its write-ahead-log entry recorded, and the consumer group ends at the end.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class EngineCrashIT {

    private static final long CRASH_BATCH = 2;

    private static final String AVAILABLE_NOW = "\"intervalMs\": 0, \"availableNow\": true";

    @ParameterizedTest
    @EnumSource(ProtocolStep.class)
    void killedWorkerResumesWithoutLossOrDuplicates(ProtocolStep step, KafkaBroker kafka, CassandraNode cassandra,
            @TempDir Path dir) {
        killAndResume(step, AVAILABLE_NOW, "crash-", step.ordinal(), kafka, cassandra, dir);
    }

    /**
     * The same with a continuous first worker, as a StreamJob runs by default (not draining to
     * an end it fixed at its start), killed at the steps around reading and writing.
     */
    @ParameterizedTest
    @EnumSource(value = ProtocolStep.class, names = {"AFTER_WAL", "MID_READ", "MID_WRITE"})
    void killedContinuousWorkerResumesWithoutLossOrDuplicates(ProtocolStep step, KafkaBroker kafka, CassandraNode cassandra,
            @TempDir Path dir) {
        killAndResume(step, "\"intervalMs\": 0", "crash-continuous-", 100 + step.ordinal(), kafka, cassandra, dir);
    }

    /** The first worker runs with {@code firstTrigger} and is killed; the second drains the topic ({@code availableNow}). */
    private static void killAndResume(ProtocolStep step, String firstTrigger, String prefix, long seed, KafkaBroker kafka,
            CassandraNode cassandra, Path dir) {
        String name = prefix + step.name().toLowerCase().replace('_', '-');
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, name, 3, seed,
                json -> json.replace("\"intervalMs\": 200", firstTrigger));
        job.orders.produce(kafka, job.topic, 2500, 0);
        assertThat(job.orders.eventsPerOrder().values()).as("orders repeat within and across batches")
                .allMatch(n -> n >= 2);

        try (WorkerProcess first = job.startWorker(Map.of("ONCESTREAM_TEST_PAUSE_AT", step + ":" + CRASH_BATCH))) {
            first.awaitOutput("ONCESTREAM-TEST-PAUSED " + step + " " + CRASH_BATCH, Duration.ofMinutes(3));
            first.kill9();
        }
        job.editConfig(json -> json.replace(firstTrigger, AVAILABLE_NOW));
        io.oncestream.engine.checkpoint.BatchOffsets walEntry = job.offsets(CRASH_BATCH);
        assertThat(job.batchIds("offsets")).endsWith(CRASH_BATCH);
        assertThat(job.batchIds("commits").contains(CRASH_BATCH)).isEqualTo(step == ProtocolStep.AFTER_COMMIT_LOG);
        if (step != ProtocolStep.AFTER_COMMIT_LOG) {
            assertThat(job.rows()).as("the crash interrupted a batch").isNotEqualTo(job.orders.expectedRows());
        }

        String secondLog;
        try (WorkerProcess second = job.startWorker(Map.of())) {
            assertThat(second.waitForExit(Duration.ofMinutes(4))).as(second.log()).isZero();
            secondLog = second.log();
        }

        assertThat(job.rows()).isEqualTo(job.orders.expectedRows());
        assertThat(job.deadLetters()).isEmpty();
        assertThat(job.offsets(CRASH_BATCH)).as("the replayed batch kept its range").isEqualTo(walEntry);
        if (step != ProtocolStep.AFTER_COMMIT_LOG) {
            assertThat(secondLog).contains("replaying open batch " + CRASH_BATCH);
        } else {
            assertThat(secondLog).doesNotContain("replaying open batch");
        }
        // The checkpoint's totals count each of the 2,500 records once, across the killed process
        // and the one that replayed its batch.
        List<Long> commits = job.batchIds("commits");
        io.oncestream.engine.checkpoint.BatchCommit lastCommit = job.commit(commits.get(commits.size() - 1));
        io.oncestream.contract.RecordTotals totals = lastCommit.totals();
        assertThat(totals).as("the last commit's totals, in " + lastCommit).isNotNull();
        assertThat(totals.read()).as("records read, in " + lastCommit).isEqualTo(2500);
        assertThat(totals.read()).isEqualTo(totals.filteredOut() + totals.written() + totals.deadLettered());
        Map<TopicPartition, Long> ends = endOffsets(kafka, job.topic);
        Map<TopicPartition, OffsetAndMetadata> group = groupOffsets(kafka, "oncestream-it." + name);
        ends.forEach((tp, end) -> assertThat(group.get(tp).offset()).as("group offset of " + tp).isEqualTo(end));
    }

    static Map<TopicPartition, Long> endOffsets(KafkaBroker kafka, String topic) {
        try {
            var partitions = kafka.admin().describeTopics(java.util.List.of(topic)).allTopicNames().get().get(topic).partitions();
            Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request = new java.util.HashMap<>();
            partitions.forEach(p -> request.put(new TopicPartition(topic, p.partition()),
                    org.apache.kafka.clients.admin.OffsetSpec.latest()));
            Map<TopicPartition, Long> out = new java.util.HashMap<>();
            kafka.admin().listOffsets(request).all().get().forEach((tp, info) -> out.put(tp, info.offset()));
            return out;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<TopicPartition, OffsetAndMetadata> groupOffsets(KafkaBroker kafka, String group) {
        try {
            return kafka.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
