package io.oncestream.engine.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.SourceException;
import io.oncestream.engine.SourceLag;
import io.oncestream.engine.config.JobConfig;

/**
 * The job's lag as Kafka sees it now, on its own schedule rather than when a batch is planned:
 * for every partition of the job's topics, the last stable offset, the offset the job has
 * committed, and the timestamp of the oldest record not committed yet. So the lag keeps growing
 * while the sink is down, a worker waits, or another worker is gone.
 *
 * <p>The caller gives the committed offsets it knows exactly (a worker: its own partitions, from
 * its checkpoint); for the others, the job's consumer-group offsets, which a worker commits right
 * after each batch's commit (never ahead of the table). A partition with neither has no lag
 * figure. The oldest record's timestamp is fetched once per committed offset: a one-record read
 * at that offset, cached until the offset moves.
 */
public final class LagProbe implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(LagProbe.class.getName());

    /** Probes between two reads of the topics' partitions (a topic may grow partitions). */
    private static final int DESCRIBE_EVERY = 12;

    private final JobConfig.KafkaSource config;
    private final Duration timeout;
    private final String clientId;
    private Admin admin;
    private KafkaConsumer<byte[], byte[]> reader;
    private List<TopicPartition> partitions = List.of();
    private int probes;
    private boolean groupUnreadable;
    /** Per partition: the committed offset whose record's timestamp is known, and that timestamp. */
    private final Map<TopicPartition, long[]> timestamps = new HashMap<>();

    /**
     * @param timeout  how long one probe may wait for Kafka before it fails
     * @param clientId the Kafka client id prefix (the broker's logs and quotas see it)
     */
    public LagProbe(JobConfig.KafkaSource config, Duration timeout, String clientId) {
        this.config = config;
        this.timeout = timeout;
        this.clientId = clientId;
    }

    /**
     * @param exactCommitted {@code topic-partition} → next offset to apply, for the partitions the
     *                       caller knows from its checkpoint
     * @return {@code topic-partition} → lag, for every partition of the job's topics with a known
     *         committed offset
     * @throws SourceException when Kafka does not answer within the timeout
     */
    public synchronized Map<String, SourceLag> probe(Map<String, Long> exactCommitted) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (probes++ % DESCRIBE_EVERY == 0 || partitions.isEmpty()) {
                partitions = describe(deadline);
            }
            Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
            partitions.forEach(tp -> specs.put(tp, OffsetSpec.latest()));
            Map<TopicPartition, Long> latest = new HashMap<>();
            admin().listOffsets(specs, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                    .get(remaining(deadline), TimeUnit.MILLISECONDS).forEach((tp, info) -> latest.put(tp, info.offset()));

            Map<TopicPartition, Long> committed = new HashMap<>();
            Set<TopicPartition> exact = new HashSet<>();
            for (TopicPartition tp : partitions) {
                Long offset = exactCommitted.get(TopicPartitionKey.of(tp.topic(), tp.partition()));
                if (offset != null) {
                    committed.put(tp, offset);
                    exact.add(tp);
                }
            }
            if (committed.size() < partitions.size()) {
                groupOffsets(deadline).forEach(committed::putIfAbsent);
            }

            Map<TopicPartition, Long> behind = new HashMap<>();
            committed.forEach((tp, offset) -> {
                Long end = latest.get(tp);
                if (end != null && offset < end) {
                    behind.put(tp, offset);
                }
            });
            readTimestamps(behind, deadline);

            Map<String, SourceLag> out = new TreeMap<>();
            committed.forEach((tp, offset) -> {
                Long end = latest.get(tp);
                if (end == null) {
                    return;
                }
                long[] known = timestamps.get(tp);
                Long oldest = behind.containsKey(tp) && known != null && known[0] == offset ? known[1] : null;
                out.put(TopicPartitionKey.of(tp.topic(), tp.partition()), new SourceLag(offset, end, oldest, exact.contains(tp)));
            });
            return out;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new SourceException("cannot read the lag from Kafka at " + config.bootstrapServers() + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new SourceException("cannot read the lag from Kafka at " + config.bootstrapServers() + ": no answer within "
                    + timeout.toMillis() + " ms", e);
        } catch (KafkaException e) {
            throw new SourceException("cannot read the lag from Kafka at " + config.bootstrapServers() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SourceException("interrupted while reading the lag", e);
        }
    }

    private List<TopicPartition> describe(long deadline) throws InterruptedException, ExecutionException, TimeoutException {
        Map<String, TopicDescription> topics = admin().describeTopics(config.topics()).allTopicNames()
                .get(remaining(deadline), TimeUnit.MILLISECONDS);
        List<TopicPartition> out = new ArrayList<>();
        for (String topic : config.topics()) {
            topics.get(topic).partitions().forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        }
        return out;
    }

    private Map<TopicPartition, Long> groupOffsets(long deadline) throws InterruptedException, TimeoutException {
        if (groupUnreadable) {
            return Map.of();
        }
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            Map<TopicPartition, OffsetAndMetadata> offsets = admin().listConsumerGroupOffsets(config.groupId())
                    .partitionsToOffsetAndMetadata().get(remaining(deadline), TimeUnit.MILLISECONDS);
            offsets.forEach((tp, o) -> {
                if (o != null) {
                    out.put(tp, o.offset());
                }
            });
            return out;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException) {
                // A principal that may commit but not describe its group: the lag of other workers'
                // partitions is unknown here (each worker still reports its own).
                groupUnreadable = true;
                LOG.log(Level.WARNING, "cannot read the offsets of group '" + config.groupId() + "' ("
                        + e.getCause().getMessage() + "): this worker reports the lag of its own partitions only");
                return Map.of();
            }
            throw new SourceException("cannot read the offsets of group '" + config.groupId() + "': "
                    + (e.getCause() == null ? e : e.getCause()).getMessage(), e);
        }
    }

    /** Reads the record at each {@code offset} not read before, until the deadline; what is still unread stays unknown. */
    private void readTimestamps(Map<TopicPartition, Long> behind, long deadline) {
        Map<TopicPartition, Long> todo = new HashMap<>();
        behind.forEach((tp, offset) -> {
            long[] known = timestamps.get(tp);
            if (known == null || known[0] != offset) {
                todo.put(tp, offset);
            }
        });
        timestamps.keySet().retainAll(behind.keySet());
        if (todo.isEmpty()) {
            return;
        }
        KafkaConsumer<byte[], byte[]> consumer = reader();
        consumer.assign(todo.keySet());
        todo.forEach(consumer::seek);
        while (!todo.isEmpty() && remaining(deadline) > 0) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(Math.min(200, remaining(deadline))))) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                Long wanted = todo.get(tp);
                if (wanted != null && r.offset() >= wanted) {
                    todo.remove(tp);
                    if (r.timestamp() >= 0) {
                        timestamps.put(tp, new long[] {wanted, r.timestamp()});
                    }
                    consumer.pause(List.of(tp));
                }
            }
        }
        consumer.assign(List.of());
    }

    private static long remaining(long deadline) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private Admin admin() {
        if (admin == null) {
            Properties props = new Properties();
            props.putAll(clientProperties());
            props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-lag");
            props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(timeout.toMillis()));
            props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(timeout.toMillis()));
            admin = Admin.create(props);
        }
        return admin;
    }

    private KafkaConsumer<byte[], byte[]> reader() {
        if (reader == null) {
            Properties props = new Properties();
            props.putAll(config.properties());
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
            props.remove(ConsumerConfig.GROUP_ID_CONFIG); // assigned partitions, nothing committed
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-lag-reader");
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
            props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
            props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(64 * 1024));
            props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(1024 * 1024));
            props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
            props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(Math.max(1000, timeout.toMillis())));
            props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(timeout.toMillis()));
            reader = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        return reader;
    }

    /** The job's Kafka properties that an admin client takes too (security, bootstrap), without consumer-only ones. */
    private Map<String, Object> clientProperties() {
        Map<String, Object> out = new HashMap<>();
        Set<String> known = AdminClientConfig.configNames();
        config.properties().forEach((k, v) -> {
            if (known.contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
                out.put(k, v);
            }
        });
        out.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        return out;
    }

    @Override
    public synchronized void close() {
        if (admin != null) {
            admin.close(Duration.ZERO);
        }
        if (reader != null) {
            reader.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ZERO));
        }
    }
}
