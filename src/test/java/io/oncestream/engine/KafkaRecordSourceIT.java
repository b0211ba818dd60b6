package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.config.TestConfigs;
import io.oncestream.engine.kafka.KafkaRecordSource;
import io.oncestream.engine.kafka.PartitionAssignment;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;

/**
 * The source against a real broker: consecutive ranges of random sizes, while the topic grows
 * and with aborted transactions leaving gaps, each give exactly the records an independent
 * {@code read_committed} consumer finds in that range. The source keeps what the consumer
 * returned past one range's end for the next range, so this checks that those records are
 * neither lost nor given twice, also around a re-read of an earlier range (a replay) and a
 * range that ends before what was read ahead.
 */
@ExtendWith(KafkaExtension.class)
class KafkaRecordSourceIT {

    @Test
    void consecutiveRangesGiveExactlyTheirRecords(KafkaBroker kafka) {
        String topic = kafka.createTopic("source-ranges", 2);
        Random random = new Random(5);
        String json = TestConfigs.orders("it/source", kafka.bootstrapServers(), topic, "127.0.0.1:1", "dc", "k", "t");
        KafkaRecordSource source = new KafkaRecordSource(JobConfigs.parse(json).source(),
                new PartitionAssignment(List.of(topic), 1, 0), () -> false);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.producerProperties(
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "source-" + topic)))) {
            producer.initTransactions();
            Map<Integer, Long> read = new TreeMap<>(Map.of(0, 0L, 1, 0L)); // where the next range of each partition starts
            int ranges = 0;
            int replays = 0;
            for (int round = 0; round < 12; round++) {
                int count = 200 + random.nextInt(4000);
                producer.beginTransaction();
                for (int i = 0; i < count; i++) {
                    producer.send(new ProducerRecord<>(topic, i % 2, null, "r" + round + "-" + i));
                }
                if (round % 4 == 3) {
                    producer.abortTransaction(); // offsets without records, and a marker
                } else {
                    producer.commitTransaction();
                }
                List<ConsumerRecord<String, String>> committed = kafka.readAll(topic, "read_committed");
                Map<Integer, Long> ends = new TreeMap<>();
                source.offsets().forEach((key, o) -> ends.put(TopicPartitionKey.parse(key).partition(), o.latest()));
                // Read up to the end in ranges of random sizes, small and larger than a fetch.
                for (int p : read.keySet()) {
                    while (read.get(p) < ends.get(p)) {
                        long start = read.get(p);
                        long end = Math.min(ends.get(p), start + 1 + random.nextInt(random.nextBoolean() ? 50 : 3000));
                        assertThat(readRange(source, topic, p, start, end)).as("partition %d [%d, %d)", p, start, end)
                                .isEqualTo(expected(committed, p, start, end));
                        read.put(p, end);
                        ranges++;
                    }
                }
                if (round % 3 == 1) { // a replay: an earlier range again, then on from where reading was
                    long start = random.nextInt((int) Math.max(1, read.get(0) / 2));
                    long end = start + 1 + random.nextInt(500);
                    assertThat(readRange(source, topic, 0, start, end)).isEqualTo(expected(committed, 0, start, end));
                    replays++;
                }
            }
            assertThat(ranges).as("ranges read").isGreaterThan(40);
            assertThat(replays).isEqualTo(4);
        } finally {
            source.close();
        }
    }

    /**
     * A run of one batch: the source commits the group offsets and closes right away, with the
     * group coordinator not yet found. Closing does not wait for pending requests, so the
     * group's offsets must still be the batch's ends afterwards.
     */
    @Test
    void groupOffsetsCommittedJustBeforeClosingAreKept(KafkaBroker kafka) throws Exception {
        String topic = kafka.createTopic("source-close", 2);
        kafka.produce(List.of(new ProducerRecord<>(topic, 0, null, "a"), new ProducerRecord<>(topic, 1, null, "b"),
                new ProducerRecord<>(topic, 1, null, "c")));
        JobConfig.KafkaSource config = JobConfigs.parse(TestConfigs.orders("it/close-" + topic, kafka.bootstrapServers(), topic,
                "127.0.0.1:1", "dc", "k", "t")).source();
        KafkaRecordSource source = new KafkaRecordSource(config, new PartitionAssignment(List.of(topic), 1, 0), () -> false,
                "job-uid-1");
        Map<String, ChainPoint> points = Map.of(TopicPartitionKey.of(topic, 0), new ChainPoint(1, 10),
                TopicPartitionKey.of(topic, 1), new ChainPoint(2, 20));
        try {
            source.commitGroupOffsets(points);
        } finally {
            source.close();
        }
        Map<Integer, Long> group = new TreeMap<>();
        kafka.admin().listConsumerGroupOffsets(config.groupId()).partitionsToOffsetAndMetadata().get()
                .forEach((tp, om) -> group.put(tp.partition(), om.offset()));
        assertThat(group).isEqualTo(Map.of(0, 1L, 1, 2L));
        // Read back as this job's chain points (a lost checkpoint's), and only by this job.
        try (KafkaRecordSource same = new KafkaRecordSource(config, new PartitionAssignment(List.of(topic), 1, 0), () -> false,
                "job-uid-1");
                KafkaRecordSource other = new KafkaRecordSource(config, new PartitionAssignment(List.of(topic), 1, 0), () -> false,
                        "job-uid-2");
                KafkaRecordSource owner1 = new KafkaRecordSource(config, new PartitionAssignment(List.of(topic), 2, 1), () -> false,
                        "job-uid-1")) {
            assertThat(same.committedChainPoints()).isEqualTo(points);
            assertThat(other.committedChainPoints()).as("an earlier job of the same name").isEmpty();
            assertThat(owner1.committedChainPoints()).as("worker 1 of 2 owns partition 1 only")
                    .isEqualTo(Map.of(TopicPartitionKey.of(topic, 1), new ChainPoint(2, 20)));
        }
    }

    /**
     * Planning from the fetch: once a batch was read to its ends, the next plan's latest offsets
     * come from one poll instead of {@code ListOffsets}; they are offsets Kafka has (at most its
     * last stable ones), and reading up to them gives exactly the committed records, the polled
     * ones included. A start the consumer is not at is planned with {@code ListOffsets}, and so is
     * a partition whose records were deleted past the consumer's position before it fetched them:
     * the earliest offset then tells the planner that records were lost.
     */
    @Test
    void plansFromTheFetchAfterABatchAndWithListOffsetsOtherwise(KafkaBroker kafka) throws Exception {
        String topic = kafka.createTopic("source-fetch-plan", 2);
        String json = TestConfigs.orders("it/fetch-plan", kafka.bootstrapServers(), topic, "127.0.0.1:1", "dc", "k", "t");
        try (KafkaRecordSource source = new KafkaRecordSource(JobConfigs.parse(json).source(),
                new PartitionAssignment(List.of(topic), 1, 0), () -> false)) {
            Map<String, Long> ends = new TreeMap<>(Map.of(TopicPartitionKey.of(topic, 0), 0L, TopicPartitionKey.of(topic, 1), 0L));
            produce(kafka, topic, 0, 600);
            Map<String, KafkaOffsets> first = source.offsets(ends);
            assertThat(source.plansFromFetch()).as("nothing read yet: the consumer is at no start").isZero();
            ends = readPlanned(kafka, source, topic, ends, first);
            // The fetch may miss its wait on a loaded machine (then ListOffsets plans, and a read
            // comes before the next try): a few rounds, of which at least one must come from it.
            for (int round = 1; round <= 3; round++) {
                produce(kafka, topic, round * 1000, 500);
                long before = source.plansFromFetch();
                Map<String, KafkaOffsets> next = source.offsets(ends);
                Map<String, KafkaOffsets> listed = source.offsets();
                long newer = 0;
                for (String p : ends.keySet()) {
                    assertThat(next.get(p).latest()).as("%s: latest offset planned, round %d", p, round)
                            .isGreaterThanOrEqualTo(ends.get(p)).isLessThanOrEqualTo(listed.get(p).latest());
                    assertThat(next.get(p).earliest()).isLessThanOrEqualTo(ends.get(p));
                    newer += next.get(p).latest() - ends.get(p);
                }
                assertThat(newer).as("records planned in round %d", round).isPositive();
                ends = readPlanned(kafka, source, topic, ends, next);
                if (source.plansFromFetch() > before) {
                    break;
                }
            }
            assertThat(source.plansFromFetch()).as("plans answered from the fetch").isPositive();
            Map<String, Long> elsewhere = new TreeMap<>(ends);
            elsewhere.put(TopicPartitionKey.of(topic, 0), 1L);
            long beforeElsewhere = source.plansFromFetch();
            produce(kafka, topic, 5000, 40);
            source.offsets(elsewhere);
            assertThat(source.plansFromFetch()).as("a start the consumer is not at").isEqualTo(beforeElsewhere);
            // Records deleted past where the consumer is: its next fetch fails (OffsetOutOfRange) and
            // ListOffsets plans, whose earliest offset shows the loss. First it reads everything
            // committed, so that no fetch of its own can hold records from past its position; the
            // records then deleted are written in a transaction left open until after the deletion,
            // which read_committed fetches cannot return before.
            Map<String, Long> stable = latest(source.offsets());
            for (int i = 0; i < 5 && !ends.equals(stable); i++) {
                ends = readPlanned(kafka, source, topic, ends, source.offsets(ends));
                stable = latest(source.offsets());
            }
            assertThat(ends).as("read up to the last stable offsets").isEqualTo(stable);
            long position = ends.get(TopicPartitionKey.of(topic, 0));
            long deletedBelow;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.producerProperties(
                    Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "fetch-plan-" + topic)))) {
                producer.initTransactions();
                producer.beginTransaction();
                long last = -1;
                for (int i = 0; i < 20; i++) {
                    last = producer.send(new ProducerRecord<>(topic, 0, null, "deleted" + i)).get().offset();
                }
                deletedBelow = last + 1;
                assertThat(deletedBelow).isGreaterThan(position);
                kafka.admin().deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(deletedBelow))).all().get();
                producer.commitTransaction();
            }
            long fromFetch = source.plansFromFetch();
            KafkaOffsets afterDeletion = source.offsets(ends).get(TopicPartitionKey.of(topic, 0));
            assertThat(afterDeletion.earliest()).as("earliest after the deletion").isEqualTo(deletedBelow);
            assertThat(source.plansFromFetch()).isEqualTo(fromFetch);
        }
    }

    /**
     * Batches smaller than what a poll brings (cut to a small heap, say) take less than each plan's
     * poll adds to the records held past their ends; planning stops polling once those take what a
     * fetch may bring, and plans from them until they are worked off, so they stay bounded, and
     * every batch still reads exactly its range.
     */
    @Test
    void theRecordsHeldPastSmallBatchesStayWithinWhatAFetchMayBring(KafkaBroker kafka) throws Exception {
        String topic = kafka.createTopic("source-held", 1);
        String json = TestConfigs.orders("it/held", kafka.bootstrapServers(), topic, "127.0.0.1:1", "dc", "k", "t")
                .replace("\"maxRecordsPerBatch\": 500}", "\"maxRecordsPerBatch\": 500,"
                        + " \"properties\": {\"fetch.max.bytes\": \"20000\", \"max.poll.records\": \"50\"}}");
        String pad = "x".repeat(1000);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            records.add(new ProducerRecord<>(topic, 0, null, "r" + i + pad));
        }
        kafka.produce(records);
        String partition = TopicPartitionKey.of(topic, 0);
        try (KafkaRecordSource source = new KafkaRecordSource(JobConfigs.parse(json).source(),
                new PartitionAssignment(List.of(topic), 1, 0), () -> false)) {
            long next = 0;
            long mostHeld = 0;
            for (int batch = 0; batch < 60; batch++) {
                KafkaOffsets planned = source.offsets(Map.of(partition, next)).get(partition);
                mostHeld = Math.max(mostHeld, source.heldBytes());
                long end = Math.min(planned.latest(), next + 10);
                List<Long> read = new ArrayList<>();
                source.read(Map.of(partition, new PartitionRange(next, end, 0)), r -> {
                    assertThat(new String(r.value(), StandardCharsets.UTF_8)).startsWith("r" + r.offset() + "x");
                    read.add(r.offset());
                });
                assertThat(read).as("batch %d: exactly its range", batch).containsExactlyElementsOf(
                        java.util.stream.LongStream.range(next, end).boxed().toList());
                next = end;
                mostHeld = Math.max(mostHeld, source.heldBytes());
            }
            assertThat(next).isEqualTo(600);
            assertThat(source.plansFromFetch()).as("plans answered from what is held").isPositive();
            assertThat(mostHeld).as("held past the batches: a fetch's 20,000 bytes and at most one poll of 50 records more")
                    .isPositive().isLessThanOrEqualTo(20_000 + 50 * 1005);
        }
    }

    private static Map<String, Long> latest(Map<String, KafkaOffsets> offsets) {
        Map<String, Long> out = new TreeMap<>();
        offsets.forEach((p, o) -> out.put(p, o.latest()));
        return out;
    }

    private static void produce(KafkaBroker kafka, String topic, int from, int count) {
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            records.add(new ProducerRecord<>(topic, i % 2, null, "r" + i));
        }
        kafka.produce(records);
    }

    /** Reads the batch from {@code starts} to the planned latest offsets, checks it is exact, and returns its ends. */
    private static Map<String, Long> readPlanned(KafkaBroker kafka, KafkaRecordSource source, String topic, Map<String, Long> starts,
            Map<String, KafkaOffsets> planned) {
        Map<String, PartitionRange> ranges = new TreeMap<>();
        Map<String, Long> ends = new TreeMap<>();
        starts.forEach((p, start) -> {
            ranges.put(p, new PartitionRange(start, planned.get(p).latest(), 0));
            ends.put(p, planned.get(p).latest());
        });
        List<String> got = new ArrayList<>();
        source.read(ranges, r -> got.add(r.partition() + "@" + r.offset() + "=" + new String(r.value(), StandardCharsets.UTF_8)));
        List<ConsumerRecord<String, String>> committed = kafka.readAll(topic, "read_committed");
        List<String> want = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            String key = TopicPartitionKey.of(topic, p);
            want.addAll(expected(committed, p, starts.get(key), ends.get(key)));
        }
        assertThat(got).as("records read from %s to %s", starts, ends).containsExactlyInAnyOrderElementsOf(want);
        return ends;
    }

    private static List<String> readRange(KafkaRecordSource source, String topic, int partition, long start, long end) {
        List<String> out = new ArrayList<>();
        source.read(Map.of(TopicPartitionKey.of(topic, partition), new PartitionRange(start, end, 0)),
                r -> out.add(r.partition() + "@" + r.offset() + "=" + new String(r.value(), StandardCharsets.UTF_8)));
        return out;
    }

    private static List<String> expected(List<ConsumerRecord<String, String>> committed, int partition, long start, long end) {
        return committed.stream().filter(r -> r.partition() == partition && r.offset() >= start && r.offset() < end)
                .map(r -> r.partition() + "@" + r.offset() + "=" + r.value()).toList();
    }
}
