package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJob;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.TestJobs;

class CheckpointCompatibilityTest {

    private static JobConfig config(String extraSpec) {
        return WorkerJobConfigs.from(TestJobs.job(extraSpec));
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

        StreamJob retargeted = TestJobs.job("  parallelism: 2\n");
        retargeted.getSpec().source.kafka.topics = List.of("orders", "refunds");
        retargeted.getSpec().sink.cassandra.table = "paid_orders_v2";
        JobConfig other = WorkerJobConfigs.from(retargeted);
        assertThat(CheckpointCompatibility.refusal(before, other)).get().asString()
                .contains("spec.source.kafka.topics changed from [orders] to [orders, refunds]")
                .contains("spec.sink.cassandra keyspace.table changed from shop.paid_orders to shop.paid_orders_v2");
    }
}
