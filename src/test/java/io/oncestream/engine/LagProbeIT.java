package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.config.TestConfigs;
import io.oncestream.engine.kafka.KafkaRecordSource;
import io.oncestream.engine.kafka.LagProbe;
import io.oncestream.engine.kafka.PartitionAssignment;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;

/**
 * The lag probe against a real broker: per partition, the last stable offset, the committed
 * offset (the caller's own, else the consumer group's) and the Kafka timestamp of the oldest
 * record not committed; a partition nobody committed has no figure; an unreachable broker is an
 * error within the probe's timeout, not a stale figure.
 */
@ExtendWith(KafkaExtension.class)
class LagProbeIT {

    @Test
    void lagIsTheRecordsBehindAndTheAgeOfTheOldest(KafkaBroker kafka) {
        String topic = kafka.createTopic("lag-probe", 3);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            records.add(new ProducerRecord<>(topic, 0, 1_000L + i, "k" + i, "v"));
        }
        for (int i = 0; i < 5; i++) {
            records.add(new ProducerRecord<>(topic, 1, 2_000L + i, "k" + i, "v"));
        }
        kafka.produce(records);
        JobConfig.KafkaSource config = JobConfigs.parse(TestConfigs.orders("it/lag-" + topic, kafka.bootstrapServers(), topic,
                "127.0.0.1:1", "dc", "k", "t")).source();
        // Another worker of the job committed partition 1 up to offset 2.
        KafkaRecordSource other = new KafkaRecordSource(config, new PartitionAssignment(List.of(topic), 1, 0), () -> false);
        other.commitGroupOffsets(Map.of(TopicPartitionKey.of(topic, 1), new ChainPoint(2, 0)));
        other.close();

        String p0 = TopicPartitionKey.of(topic, 0);
        String p1 = TopicPartitionKey.of(topic, 1);
        try (LagProbe probe = new LagProbe(config, Duration.ofSeconds(10), "lag-probe-it")) {
            Map<String, SourceLag> lag = probe.probe(Map.of(p0, 4L));
            assertThat(lag).as("partition 2: nobody committed it").containsOnlyKeys(p0, p1);
            assertThat(lag.get(p0)).isEqualTo(new SourceLag(4, 10, 1_004L, true));
            assertThat(lag.get(p1)).isEqualTo(new SourceLag(2, 5, 2_002L, false));
            assertThat(lag.get(p0).records()).isEqualTo(6);
            assertThat(lag.get(p0).ageMs(11_004L)).isEqualTo(10_000);

            kafka.produce(List.of(new ProducerRecord<>(topic, 0, 3_000L, "k", "v"), new ProducerRecord<>(topic, 0, 3_001L, "k", "v")));
            assertThat(probe.probe(Map.of(p0, 10L)).get(p0)).as("the end moved, and so did the oldest record")
                    .isEqualTo(new SourceLag(10, 12, 3_000L, true));
            SourceLag caughtUp = probe.probe(Map.of(p0, 12L)).get(p0);
            assertThat(caughtUp).isEqualTo(new SourceLag(12, 12, null, true));
            assertThat(caughtUp.ageMs(99_999L)).isZero();
        }
    }

    @Test
    void anUnreachableBrokerIsAnErrorNotAStaleFigure(KafkaBroker kafka) throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        JobConfig.KafkaSource config = JobConfigs.parse(TestConfigs.orders("it/lag-down", "127.0.0.1:" + closed, "t",
                "127.0.0.1:1", "dc", "k", "t")).source();
        try (LagProbe probe = new LagProbe(config, Duration.ofSeconds(2), "lag-probe-down")) {
            assertThatThrownBy(() -> probe.probe(Map.of())).isInstanceOf(SourceException.class)
                    .hasMessageStartingWith("cannot read the lag from Kafka at 127.0.0.1:" + closed);
        }
    }
}
