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
    void aParallelismChangeIsARescaleRefusedOnlyWhileSuspended() {
        JobConfig before = config("  parallelism: 2\n");
        JobConfig rescaled = config("  parallelism: 3\n");
        assertThat(CheckpointCompatibility.refusal(before, rescaled)).isEmpty();
        assertThat(CheckpointCompatibility.refusal(before, rescaled, true)).get().asString()
                .startsWith("spec.parallelism changed from 2 to 3 while spec.suspend is true")
                .contains("Resume the job to rescale it");
    }

    @Test
    void topicsAndTableChangesAreRefusedByFieldWithAParallelismChangeInTheSameEdit() {
        JobConfig before = config("  parallelism: 2\n");

        StreamJob retargeted = TestJobs.job("  parallelism: 2\n");
        retargeted.getSpec().source.kafka.topics = List.of("orders", "refunds");
        retargeted.getSpec().sink.cassandra.table = "paid_orders_v2";
        JobConfig other = WorkerJobConfigs.from(retargeted);
        assertThat(CheckpointCompatibility.refusal(before, other)).get().asString()
                .contains("spec.source.kafka.topics changed from [orders] to [orders, refunds]")
                .contains("spec.sink.cassandra keyspace.table changed from shop.paid_orders to shop.paid_orders_v2")
                .contains("revert the change");
        assertThat(CheckpointCompatibility.refusal(before, other.withParallelism(4))).get().asString()
                .contains("spec.parallelism changed from 2 to 4 in the same edit (rescale separately)");
    }
}
