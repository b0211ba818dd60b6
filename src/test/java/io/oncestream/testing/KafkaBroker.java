package io.oncestream.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The test run's real Kafka broker, with helpers to make topics and produce and read records. */
public final class KafkaBroker implements AutoCloseable {

    private final LocalService service;
    private final String bootstrap;
    private final Admin admin;

    KafkaBroker(LocalService service) {
        this.service = service;
        this.bootstrap = service.env().get("KAFKA_BOOTSTRAP");
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000));
    }

    /** {@code host:port} of the broker's client listener. */
    public String bootstrapServers() {
        return bootstrap;
    }

    public Admin admin() {
        return admin;
    }

    /** Stops the broker process (for failure tests); {@link #start()} brings it back on the same data. */
    public void stop() {
        service.stop();
    }

    public void start() {
        service.start();
    }

    /**
     * Makes the broker slow until closed: its process is paused with SIGSTOP for {@code paused}
     * of every {@code period} (a broker in long GC pauses or on a starved machine; this machine's
     * kernel has no netem to delay its packets instead). Every request waits up to
     * {@code paused}; none fails. Closing lets it run again.
     */
    public AutoCloseable slow(java.time.Duration paused, java.time.Duration period) {
        long pid;
        try {
            pid = Long.parseLong(java.nio.file.Files.readString(service.dataDir().resolve("kafka.pid")).strip());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("no pid file of the broker", e);
        }
        if (paused.compareTo(period) >= 0) {
            throw new IllegalArgumentException("paused " + paused + " must be shorter than the period " + period);
        }
        ProcessHandle broker = ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("the broker " + pid + " does not run"));
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread pauser = new Thread(() -> {
            try {
                while (running.get() && broker.isAlive()) {
                    Signals.send("STOP", pid);
                    try {
                        Thread.sleep(paused.toMillis()); // the fault itself: how long the broker stays paused
                    } finally {
                        Signals.send("CONT", pid);
                    }
                    Thread.sleep(period.minus(paused).toMillis()); // the fault's rhythm: how long it runs before the next pause
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "slow-broker");
        pauser.setDaemon(true);
        pauser.start();
        return () -> {
            // Not interrupted: a STOP being sent is waited for, so the last CONT comes after it.
            running.set(false);
            pauser.join(period.toMillis() + 10_000);
            Signals.send("CONT", pid);
        };
    }

    /** Restarts the broker process on the same data (for failure tests). */
    public void restart() {
        service.restart();
    }

    /** Creates a topic named {@code prefix-<random>} and returns its name, so tests never share one. */
    public String createTopic(String prefix, int partitions) {
        return createTopic(prefix, partitions, Map.of());
    }

    /** {@link #createTopic(String, int)} with topic-level settings, e.g. {@code max.message.bytes}. */
    public String createTopic(String prefix, int partitions, Map<String, String> configs) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get();
            awaitLeaders(name);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topic " + name, e.getCause());
        }
        return name;
    }

    /**
     * Waits until every partition of {@code topic} has a leader that serves it: the broker's
     * metadata names one and that leader answers a ListOffsets request. The metadata can name a
     * leader a moment before the leader's replica manager has the partition open.
     */
    public void awaitLeaders(String topic) {
        Awaits.until(Duration.ofSeconds(60), "a serving leader for every partition of " + topic, () -> {
            try {
                var partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
                if (!partitions.stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0)) {
                    return false;
                }
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                partitions.forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                admin.listOffsets(latest).all().get();
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException e) {
                return false;
            }
        });
    }

    /**
     * Producer settings for string keys and values (idempotent, acks=all); {@code extra} overrides.
     * One request in flight per connection: with several, a first batch refused with
     * NOT_LEADER_OR_FOLLOWER by a partition that is still opening can be overtaken by the next
     * batch, and the broker (no producer state yet) accepts that one; every retry of the first
     * then fails with OUT_OF_ORDER_SEQUENCE_NUMBER until delivery.timeout.ms expires it
     * (KAFKA-15591). Measured here: 10 of 19 fresh six-partition topics lost a batch this way.
     */
    public Properties producerProperties(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        p.putAll(extra);
        return p;
    }

    /** Consumer settings for string keys and values, no group, from the earliest offset. */
    public Properties consumerProperties(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.putAll(extra);
        return p;
    }

    /** Produces the records (idempotent producer, acks=all) and waits until all are acknowledged. */
    public void produce(Collection<ProducerRecord<String, String>> records) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(Map.of()))) {
            for (ProducerRecord<String, String> record : records) {
                producer.send(record);
            }
            producer.flush();
        }
    }

    /**
     * Reads every record of the topic's partitions from offset 0 up to their end offsets as
     * the given isolation level sees them ({@code read_committed} ends at the last stable offset).
     * For {@code read_committed} it first waits until no transaction is open on the topic (the
     * last stable offset has reached the high watermark): {@code commitTransaction()} returns
     * before the broker has written the commit markers, so a read right after it could end before
     * the transaction's records. Callers therefore read only after their transactions have ended.
     */
    public List<ConsumerRecord<String, String>> readAll(String topic, String isolationLevel) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                consumerProperties(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel)))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Map<TopicPartition, Long> ends = isolationLevel.equals("read_committed")
                    ? stableEnds(consumer, topic, partitions, deadline) : consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("did not reach the end offsets " + ends + " of " + topic + " in 60 s");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /** The last stable offsets once they have reached the high watermarks: no transaction is open any more. */
    private Map<TopicPartition, Long> stableEnds(KafkaConsumer<?, ?> consumer, String topic, List<TopicPartition> partitions,
            long deadline) {
        AtomicReference<Map<TopicPartition, Long>> ends = new AtomicReference<>();
        AtomicReference<Map<TopicPartition, Long>> highWatermarks = new AtomicReference<>();
        boolean stable;
        try {
            stable = Awaits.within(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), Duration.ofMillis(50), () -> {
                ends.set(consumer.endOffsets(partitions));
                highWatermarks.set(highWatermarks(partitions));
                return ends.get().equals(highWatermarks.get());
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (!stable) {
            throw new IllegalStateException("a transaction stayed open on " + topic + " for 60 s: last stable offsets "
                    + ends.get() + ", high watermarks " + highWatermarks.get());
        }
        return ends.get();
    }

    private Map<TopicPartition, Long> highWatermarks(List<TopicPartition> partitions) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).all().get()
                    .forEach((tp, info) -> out.put(tp, info.offset()));
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not list the high watermarks of " + partitions, e.getCause());
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
