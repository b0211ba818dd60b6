package io.oncestream.engine.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.BatchMemory;
import io.oncestream.engine.RecordSource;
import io.oncestream.engine.SourceException;
import io.oncestream.engine.StopRequestedException;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.transform.SourceRecord;

/**
 * Reads exact offset ranges from Kafka with {@code assign} + {@code seek}: no group
 * membership (so no rebalances), {@code read_committed}, and a batch ends when each
 * partition's position reaches its end offset, not after a count of records, because
 * compaction and transaction markers leave gaps in the offsets. What the consumer returns past
 * a range's end is kept for the range that starts there, so consecutive batches neither seek
 * back nor fetch those records twice.
 */
public final class KafkaRecordSource implements RecordSource {

    private static final Duration POLL = Duration.ofMillis(500);
    /**
     * How long planning from the fetch ({@link #offsets(Map)}) waits for new records: a poll
     * returns as soon as the broker has some, so this is only waited at a quiet source, which
     * then gets a plan from {@code ListOffsets} as before.
     */
    private static final Duration PLAN_POLL = Duration.ofMillis(200);
    /** Records held past the last batch's ends above which planning polls no more (they are planned first). */
    private static final int HELD_FOR_PLANNING = 10_000;
    /**
     * Nor does it poll with as many bytes of keys and values held as a fetch may bring (the
     * consumer's {@code fetch.max.bytes}), or a 32nd of the heap if that is less, as much as a
     * batch's writes hold before they are flushed (a poll more may come on top of them). Each
     * plan's poll adds what a poll returns, and batches cut to a small heap take fewer: without
     * this bound the records held grew to 4,000 of 16 KiB and a 96 MiB heap threw
     * {@code OutOfMemoryError}.
     */
    private final long heldBytesForPlanning;
    /** The consumer's {@code fetch.max.wait.ms} unless the job's properties set it. */
    private static final int FETCH_MAX_WAIT_MS = 10;
    private static final long MIB = 1024 * 1024;
    private static final Logger LOG = Logger.getLogger(KafkaRecordSource.class.getName());

    private final JobConfig.KafkaSource config;
    private final PartitionAssignment assignment;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final BooleanSupplier stopRequested;
    private final String jobInstance;
    private final Map<TopicPartition, ReadAhead> ahead = new HashMap<>();
    /**
     * Whether the last poll of {@link #offsets(Map)} brought nothing and no batch was read
     * since: a quiet source, planned with {@code ListOffsets} alone, as before, until a batch
     * reads records again (an idle worker asks Kafka no more often than it did).
     */
    private boolean quiet;
    private long plansFromFetch;
    /** The offsets of the newest group commit asked for, committed again synchronously on close. */
    private Map<TopicPartition, OffsetAndMetadata> lastGroupOffsets = Map.of();

    public KafkaRecordSource(JobConfig.KafkaSource config, PartitionAssignment assignment, BooleanSupplier stopRequested) {
        this(config, assignment, stopRequested, null);
    }

    /**
     * @param jobInstance the job's identity (its uid), which group commits carry so that a lost
     *                    checkpoint can go on from them; null: plain offsets, nothing recovered
     */
    public KafkaRecordSource(JobConfig.KafkaSource config, PartitionAssignment assignment, BooleanSupplier stopRequested,
            String jobInstance) {
        this.jobInstance = jobInstance;
        this.config = config;
        this.assignment = assignment;
        this.stopRequested = stopRequested;
        Properties props = consumerProperties(config, assignment.workerIndex());
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        // Valid: the consumer's own checks would have refused it.
        this.heldBytesForPlanning = Math.min(Long.parseLong(props.getProperty(ConsumerConfig.FETCH_MAX_BYTES_CONFIG).trim()),
                Runtime.getRuntime().maxMemory() / 32);
    }

    /**
     * The consumer settings of worker {@code workerIndex}: the job's properties, then what the
     * protocol needs (no auto-commit, {@code read_committed}, no offset reset: the checkpoint
     * decides where to read), then defaults the job's properties may override. Public so that
     * the benchmark's at-least-once loop consumes with the worker's very settings.
     */
    public static Properties consumerProperties(JobConfig.KafkaSource config, int workerIndex) {
        Properties props = new Properties();
        props.putAll(config.properties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        // A read asks only for records below the last stable offset, which the broker has, so
        // its fetches have nothing to wait for. But the fetch still in flight when a range is
        // done may be at a partition with nothing new: the broker holds it up to this long, and
        // the next batch's offsets request on the same connection waits behind it (with Kafka's
        // 500 ms default, planning took 495-499 ms in some latency runs).
        props.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, String.valueOf(FETCH_MAX_WAIT_MS));
        long heap = Runtime.getRuntime().maxMemory();
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(maxPollRecords(heap)));
        props.putIfAbsent(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(fetchMaxBytes(heap)));
        props.putIfAbsent(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(partitionFetchBytes(heap)));
        props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, config.groupId() + "-worker-" + workerIndex);
        return props;
    }

    /**
     * What one fetch may bring: 32 MiB, or an eighth of a smaller heap's maximum (a fetch's
     * records are on the heap next to the batch's, which {@link BatchMemory} gives another eighth),
     * at least Kafka's default partition size of 1 MiB.
     */
    static long fetchMaxBytes(long maxHeapBytes) {
        return Math.max(MIB, Math.min(32 * MIB, maxHeapBytes / BatchMemory.BUDGET_SHARE));
    }

    /**
     * How many records one poll may return: 5,000, or for a heap under 1.25 GiB one per 32 KiB of
     * an eighth of it (384 in a 256 MiB pod), at least 100. A poll decompresses and copies its
     * records onto the heap all at once, and a fetch's limits count compressed bytes: with 5,000
     * per poll, values of 16 KiB that lz4 had shrunk took 80 MiB at once and a 96 MiB heap threw
     * {@code OutOfMemoryError} inside the poll (docs/benchmarks.md). Records of up to about 32 KiB
     * then stay within that eighth; a poll costs microseconds, so smaller ones cost nothing to speak of.
     */
    static int maxPollRecords(long maxHeapBytes) {
        return (int) Math.max(100, Math.min(5000, maxHeapBytes / BatchMemory.BUDGET_SHARE / (32 * 1024)));
    }

    /** What one partition of a fetch may bring: 4 MiB, or a 32nd of a smaller heap's maximum, at least 1 MiB. */
    static long partitionFetchBytes(long maxHeapBytes) {
        return Math.max(MIB, Math.min(4 * MIB, maxHeapBytes / 32));
    }

    /** The partitions this worker owns now. */
    private List<TopicPartition> owned() {
        List<TopicPartition> owned = new ArrayList<>();
        for (String topic : assignment.sortedTopics()) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new SourceException("topic '" + topic + "' does not exist in Kafka at " + config.bootstrapServers());
            }
            for (PartitionInfo info : infos) {
                if (assignment.owns(topic, info.partition())) {
                    owned.add(new TopicPartition(topic, info.partition()));
                }
            }
        }
        return owned;
    }

    @Override
    public Map<String, ChainPoint> committedChainPoints() {
        if (jobInstance == null) {
            return Map.of();
        }
        try {
            Map<String, ChainPoint> points = new TreeMap<>();
            consumer.committed(new java.util.HashSet<>(owned())).forEach((tp, committed) -> {
                if (committed != null) {
                    GroupMetadata.timestamp(committed.metadata(), jobInstance).ifPresent(ts -> points.put(
                            TopicPartitionKey.of(tp.topic(), tp.partition()), new ChainPoint(committed.offset(), ts)));
                }
            });
            return points;
        } catch (org.apache.kafka.common.errors.AuthorizationException | org.apache.kafka.common.errors.UnsupportedVersionException e) {
            // A principal that may commit but not describe the group, or an old broker: no recovery, as before.
            LOG.log(Level.WARNING, "cannot read the offsets of group '" + config.groupId() + "' (" + e.getMessage()
                    + "): a lost checkpoint cannot go on from them");
            return Map.of();
        } catch (KafkaException e) {
            throw new SourceException("cannot read the offsets of group '" + config.groupId() + "': " + e.getMessage(), e);
        }
    }

    /**
     * The ends to plan from, without asking Kafka for them when the consumer already knows:
     * every owned partition's records from {@code starts} (the ends of the last committed batch)
     * are held or next to be fetched, so one poll brings what came since, and each partition's
     * latest offset is the last stable offset of its newest fetch response (or, if more, the
     * position reached): an offset Kafka had, at most a fetch old. That saves the two
     * {@code ListOffsets} round trips of {@link #offsets()} and the read's own fetch, which the
     * records just polled make unnecessary. The earliest offset given is the start itself (its
     * records are held or fetchable: the poll would have failed otherwise), which is all the
     * planner checks it against for a partition the checkpoint knows.
     * <p>
     * Planned as before, with {@link #offsets()}, when any partition's start is not where the
     * consumer is, the consumer has no last stable offset yet, or the poll brought nothing: a
     * quiet source, and a broker that does not answer, which {@code ListOffsets} then reports.
     */
    @Override
    public Map<String, KafkaOffsets> offsets(Map<String, Long> starts) {
        Map<String, KafkaOffsets> fetched = starts == null ? null : fromFetch(starts);
        return fetched != null ? fetched : offsets();
    }

    private Map<String, KafkaOffsets> fromFetch(Map<String, Long> starts) {
        List<TopicPartition> owned;
        try {
            owned = owned();
        } catch (KafkaException e) {
            return null; // ListOffsets reports it
        }
        if (quiet || owned.size() != starts.size() || !consumer.assignment().containsAll(owned)) {
            return null;
        }
        int held = 0;
        for (TopicPartition tp : owned) {
            ReadAhead kept = ahead.get(tp);
            Long start = starts.get(TopicPartitionKey.of(tp.topic(), tp.partition()));
            if (start == null || kept == null || kept.from() != start) {
                return null;
            }
            held += kept.records().size();
        }
        if (held >= HELD_FOR_PLANNING || heldBytes() >= heldBytesForPlanning) {
            // Batches smaller than what polls bring (a small maxRecordsPerBatch, or a small heap):
            // plan from what is held, with the last stable offsets known, until it is worked off.
            return fromPositions(owned);
        }
        ConsumerRecords<byte[], byte[]> polled;
        try {
            consumer.resume(owned);
            polled = consumer.poll(PLAN_POLL);
            consumer.pause(owned);
        } catch (KafkaException e) {
            // For one, records aged out below the position (OffsetOutOfRange): ListOffsets gives
            // the earliest, and the planner decides; the next read seeks.
            ahead.clear();
            return null;
        }
        for (ConsumerRecord<byte[], byte[]> r : polled) {
            ahead.get(new TopicPartition(r.topic(), r.partition())).records().add(r);
        }
        if (polled.isEmpty()) {
            quiet = true;
            return null;
        }
        return fromPositions(owned);
    }

    /** Each partition's start and the larger of its position and last stable offset as the consumer knows them; null if it knows none. */
    private Map<String, KafkaOffsets> fromPositions(List<TopicPartition> owned) {
        Map<String, KafkaOffsets> out = new TreeMap<>();
        for (TopicPartition tp : owned) {
            OptionalLong lag = consumer.currentLag(tp);
            if (lag.isEmpty()) {
                return null;
            }
            long position = consumer.position(tp);
            long start = ahead.get(tp).from();
            out.put(TopicPartitionKey.of(tp.topic(), tp.partition()), new KafkaOffsets(start, Math.max(position, position + lag.getAsLong())));
        }
        plansFromFetch++;
        return out;
    }

    /** The bytes of the keys and values of the records held past the last batch's ends. */
    public long heldBytes() {
        long bytes = 0;
        for (ReadAhead kept : ahead.values()) {
            for (ConsumerRecord<byte[], byte[]> r : kept.records()) {
                bytes += Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize());
            }
        }
        return bytes;
    }

    /** How many times {@link #offsets(Map)} answered from the fetch, without {@code ListOffsets}. */
    public long plansFromFetch() {
        return plansFromFetch;
    }

    @Override
    public Map<String, KafkaOffsets> offsets() {
        try {
            List<TopicPartition> owned = owned();
            Map<TopicPartition, Long> earliest = consumer.beginningOffsets(owned);
            Map<TopicPartition, Long> latest = consumer.endOffsets(owned); // the last stable offset under read_committed
            Map<String, KafkaOffsets> out = new TreeMap<>();
            for (TopicPartition tp : owned) {
                out.put(TopicPartitionKey.of(tp.topic(), tp.partition()), new KafkaOffsets(earliest.get(tp), latest.get(tp)));
            }
            return out;
        } catch (KafkaException e) {
            throw new SourceException("cannot read offsets from Kafka at " + config.bootstrapServers() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void read(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler) {
        try {
            readRanges(ranges, handler);
        } catch (RuntimeException e) {
            ahead.clear(); // the next read seeks: where this one stopped is not known
            throw e;
        }
    }

    private void readRanges(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler) {
        Map<TopicPartition, PartitionRange> todo = new HashMap<>();
        Map<TopicPartition, PartitionRange> empty = new HashMap<>();
        ranges.forEach((key, range) -> (range.size() > 0 ? todo : empty).put(topicPartition(key), range));
        // Keep the assignment between batches (re-assigning resets fetch sessions); pause what this batch does not read.
        // A partition with nothing to read is assigned and positioned too, so that the next plan can come from the fetch.
        if (!consumer.assignment().containsAll(ranges.keySet().stream().map(KafkaRecordSource::topicPartition).toList())) {
            Set<TopicPartition> all = new HashSet<>(consumer.assignment());
            all.addAll(todo.keySet());
            all.addAll(empty.keySet());
            consumer.assign(all);
            ahead.clear();
        }
        consumer.pause(consumer.assignment());
        empty.forEach((tp, range) -> {
            ReadAhead kept = ahead.get(tp);
            if (kept == null || kept.from() != range.start()) {
                consumer.seek(tp, range.start());
                ahead.put(tp, new ReadAhead(range.start(), new ArrayDeque<>()));
            }
        });
        if (todo.isEmpty()) {
            return;
        }
        quiet = false;
        Set<TopicPartition> open = new HashSet<>();
        for (Map.Entry<TopicPartition, PartitionRange> e : todo.entrySet()) {
            TopicPartition tp = e.getKey();
            PartitionRange range = e.getValue();
            ReadAhead kept = ahead.remove(tp);
            if (kept == null || kept.from() != range.start()) {
                consumer.seek(tp, range.start());
            } else {
                // The previous batch ended at this one's start, and the consumer has not moved
                // since: what it returned past that end comes first, then it goes on from there.
                while (!kept.records().isEmpty() && kept.records().peekFirst().offset() < range.end()) {
                    handler.accept(toSourceRecord(kept.records().pollFirst()));
                }
                if (consumer.position(tp) >= range.end()) {
                    ahead.put(tp, new ReadAhead(range.end(), kept.records()));
                    continue;
                }
            }
            open.add(tp);
        }
        consumer.resume(open);
        while (!open.isEmpty()) {
            if (stopRequested.getAsBoolean()) {
                throw new StopRequestedException();
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                PartitionRange range = todo.get(tp);
                if (range == null || r.offset() < range.start()) {
                    continue;
                }
                if (r.offset() < range.end()) {
                    handler.accept(toSourceRecord(r));
                } else {
                    ahead.computeIfAbsent(tp, t -> new ReadAhead(range.end(), new ArrayDeque<>())).records().add(r);
                }
            }
            for (var it = open.iterator(); it.hasNext(); ) {
                TopicPartition tp = it.next();
                if (consumer.position(tp) >= todo.get(tp).end()) {
                    consumer.pause(List.of(tp));
                    ahead.putIfAbsent(tp, new ReadAhead(todo.get(tp).end(), new ArrayDeque<>()));
                    it.remove();
                }
            }
        }
    }

    /**
     * Records the consumer returned at or past a batch's end, in offset order: every record of
     * {@code [from, position)} of the partition, because the consumer's position has not moved
     * since. The next batch, which starts at {@code from}, takes them instead of seeking back and
     * fetching them again.
     */
    private record ReadAhead(long from, ArrayDeque<ConsumerRecord<byte[], byte[]>> records) {
    }

    @Override
    public void commitGroupOffsets(Map<String, ChainPoint> points) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        points.forEach((key, point) -> offsets.put(topicPartition(key), jobInstance == null ? new OffsetAndMetadata(point.offset())
                : new OffsetAndMetadata(point.offset(), GroupMetadata.encode(jobInstance, point.lastTimestamp()))));
        lastGroupOffsets = offsets;
        // Asynchronous: these offsets are for lag tools only, so a slow group coordinator (the
        // first commit of a group takes a coordinator lookup) must not hold up the next batch.
        // Commits to one coordinator complete in order; a failure is logged and the next batch
        // commits again.
        try {
            consumer.commitAsync(offsets, (done, error) -> {
                if (error != null) {
                    LOG.log(Level.WARNING, "cannot commit consumer-group offsets of group '" + config.groupId()
                            + "' (the next batch commits them again; the checkpoint, not the group, is what the job goes on from): "
                            + error.getMessage());
                }
            });
        } catch (KafkaException e) {
            throw new SourceException("cannot commit consumer-group offsets of group '" + config.groupId() + "': " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        // The newest group commit once more, synchronously: an asynchronous one may still wait
        // for the group coordinator to be found (the first commit of a run always does), and
        // closing below does not wait for it.
        try {
            consumer.commitSync(lastGroupOffsets, Duration.ofSeconds(5));
        } catch (KafkaException e) {
            LOG.log(Level.WARNING, "consumer-group offsets of group '" + config.groupId()
                    + "' may lag behind the commit log: " + e.getMessage());
        }
        // Nothing left to wait for. Waiting would only wait out the fetch at the end of the
        // topic, which the broker holds for up to fetch.max.wait.ms (10 ms by default, more if
        // the job sets it), since the consumer's closing of its fetch session queues behind it;
        // the broker expires that session by itself.
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ZERO));
    }

    private static TopicPartition topicPartition(String key) {
        TopicPartitionKey k = TopicPartitionKey.parse(key);
        return new TopicPartition(k.topic(), k.partition());
    }

    /** A consumed record as the engine sees it (public: the benchmark's at-least-once loop converts its records the same way). */
    public static SourceRecord toSourceRecord(ConsumerRecord<byte[], byte[]> r) {
        Header[] all = r.headers().toArray();
        Map<String, String> headers = all.length == 0 ? Map.of() : new HashMap<>();
        for (Header h : all) {
            headers.put(h.key(), h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8));
        }
        return new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value(), headers);
    }
}
