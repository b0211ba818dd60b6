package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Proves the test broker is a real Kafka: transactions commit and abort as Kafka's do. */
@ExtendWith(KafkaExtension.class)
class KafkaSmokeIT {

    @Test
    void readCommittedSeesExactlyTheCommittedTransactions(KafkaBroker kafka) {
        String topic = kafka.createTopic("smoke-tx", 3);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.producerProperties(
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "smoke-" + topic)))) {
            producer.initTransactions();
            sendInTransaction(producer, topic, "committed-a", 50);
            producer.commitTransaction();
            sendInTransaction(producer, topic, "aborted", 30);
            producer.abortTransaction();
            sendInTransaction(producer, topic, "committed-b", 20);
            producer.commitTransaction();
        }

        List<String> committed = values(kafka.readAll(topic, "read_committed"));
        List<String> uncommitted = values(kafka.readAll(topic, "read_uncommitted"));

        assertThat(committed).hasSize(70)
                .allMatch(v -> v.startsWith("committed-"))
                .doesNotHaveDuplicates();
        assertThat(committed).filteredOn(v -> v.startsWith("committed-a")).hasSize(50);
        assertThat(committed).filteredOn(v -> v.startsWith("committed-b")).hasSize(20);
        // read_uncommitted also returns the aborted records: the broker really ran a transaction.
        assertThat(uncommitted).hasSize(100).filteredOn(v -> v.startsWith("aborted")).hasSize(30);
    }

    private static void sendInTransaction(KafkaProducer<String, String> producer, String topic, String prefix, int count) {
        producer.beginTransaction();
        IntStream.range(0, count).forEach(i ->
                producer.send(new ProducerRecord<>(topic, "k" + i, prefix + "-" + i)));
        producer.flush();
    }

    private static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).toList();
    }
}
