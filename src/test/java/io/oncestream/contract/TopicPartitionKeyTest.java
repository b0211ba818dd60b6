package io.oncestream.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class TopicPartitionKeyTest {

    @Test
    void topicsWithDashesRoundTrip() {
        TopicPartitionKey key = TopicPartitionKey.parse("my-topic-12");
        assertThat(key.topic()).isEqualTo("my-topic");
        assertThat(key.partition()).isEqualTo(12);
        assertThat(key.toString()).isEqualTo("my-topic-12");
        assertThat(TopicPartitionKey.of("a-b", 0)).isEqualTo("a-b-0");
    }

    @Test
    void isTheFormKafkaPrintsATopicPartitionIn() {
        // Progress documents written before this type existed used TopicPartition#toString.
        assertThat(TopicPartitionKey.of("orders.v2-x", 7)).isEqualTo(new TopicPartition("orders.v2-x", 7).toString());
    }

    @Test
    void anythingElseIsRefusedByName() {
        for (String bad : new String[] {"orders", "orders-", "-3", "orders-x", "orders-1x"}) {
            assertThatThrownBy(() -> TopicPartitionKey.parse(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
        }
    }
}
