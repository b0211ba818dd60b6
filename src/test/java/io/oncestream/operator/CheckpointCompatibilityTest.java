package io.oncestream.operator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.JobConfig;

class CheckpointCompatibilityTest {

    private static JobConfig config(String extraSpec) {
        return WorkerJobConfigs.from(WorkerResourcesTest.job(extraSpec));
    }

    @Test
    void triggerAndSuspendAreCompatible() {
        JobConfig before = config("  parallelism: 2\n");
        JobConfig after = config("  parallelism: 2\n  suspend: true\n  trigger: {interval: 5s}\n");
        assertThat(CheckpointCompatibility.refusal(before, after)).isEmpty();
    }

    @Test
    void topicsTableAndParallelismChangesAreRefusedByField() {
        JobConfig before = config("  parallelism: 2\n");
        JobConfig rescaled = config("  parallelism: 3\n");
        assertThat(CheckpointCompatibility.refusal(before, rescaled)).get().asString()
                .startsWith("spec.parallelism changed from 2 to 3: the job has checkpoints")
                .contains("revert the change");

        JobConfig moreTopics = WorkerJobConfigs.from(WorkerResourcesTest.job("  parallelism: 2\n"));
        JobConfig other = new JobConfig(moreTopics.jobId(),
                new JobConfig.KafkaSource(moreTopics.source().bootstrapServers(), java.util.List.of("orders", "refunds"),
                        moreTopics.source().startingOffsets(), moreTopics.source().maxRecordsPerBatch(),
                        moreTopics.source().failOnDataLoss(), moreTopics.source().groupId(), moreTopics.source().properties()),
                moreTopics.format(), moreTopics.filter(),
                new JobConfig.CassandraSink(moreTopics.sink().contactPoints(), moreTopics.sink().localDatacenter(),
                        moreTopics.sink().keyspace(), "paid_orders_v2", moreTopics.sink().consistency(),
                        moreTopics.sink().columns(), moreTopics.sink().maxInFlight(), moreTopics.sink().maxBatchRows()),
                moreTopics.deadLetter(), moreTopics.trigger(), moreTopics.checkpoint(), moreTopics.parallelism());
        assertThat(CheckpointCompatibility.refusal(before, other)).get().asString()
                .contains("spec.source.kafka.topics changed from [orders] to [orders, refunds]")
                .contains("spec.sink.cassandra keyspace.table changed from shop.paid_orders to shop.paid_orders_v2");
    }
}
