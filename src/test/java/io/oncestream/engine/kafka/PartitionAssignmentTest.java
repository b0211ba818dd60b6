package io.oncestream.engine.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class PartitionAssignmentTest {

    @Test
    void everyPartitionHasExactlyOneWorkerAndGrowthMovesNothing() {
        List<String> topics = List.of("payments", "orders");
        int parallelism = 3;
        for (String topic : topics) {
            for (int p = 0; p < 12; p++) {
                int owners = 0;
                for (int w = 0; w < parallelism; w++) {
                    if (new PartitionAssignment(topics, parallelism, w).owns(topic, p)) {
                        owners++;
                    }
                }
                assertThat(owners).as(topic + "-" + p).isEqualTo(1);
            }
        }
        // orders is topic 0, payments topic 1 (sorted): orders-0 -> 0, orders-1 -> 1, payments-0 -> 1.
        assertThat(new PartitionAssignment(topics, 3, 0).owns("orders", 0)).isTrue();
        assertThat(new PartitionAssignment(topics, 3, 1).owns("orders", 1)).isTrue();
        assertThat(new PartitionAssignment(topics, 3, 1).owns("payments", 0)).isTrue();
        assertThat(new PartitionAssignment(topics, 3, 1).owns("unknown", 0)).isFalse();
    }
}
