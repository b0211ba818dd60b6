package io.oncestream.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.transform.SourceRecord;

/**
 * A {@link RecordSource} held in memory, standing in for Kafka in engine tests. Partitions have
 * an earliest offset (retention) and a latest one, and offsets may have gaps (compaction,
 * transaction markers), also at the end. It delivers the records of the ranges asked for,
 * interleaving partitions as a consumer would, and refuses ranges beyond what it holds. It
 * remembers every read and every group-offset commit, and calls a check on each commit before
 * accepting it. It outlives the engines that use it, as Kafka outlives workers.
 */
final class InMemorySource implements RecordSource {

    private final Map<String, TreeMap<Long, SourceRecord>> records = new TreeMap<>();
    private final Map<String, KafkaOffsets> offsets = new TreeMap<>();
    private final List<Map<String, PartitionRange>> reads = new ArrayList<>();
    private final Map<String, Long> groupOffsets = new TreeMap<>();
    private final Map<String, ChainPoint> groupPoints = new TreeMap<>();
    private boolean groupCarriesTheJob;
    private Consumer<Map<String, Long>> commitCheck = ends -> { };
    private int offsetsAsked;

    /** Adds partition {@code topic-partition} holding nothing, with both its offsets at {@code earliest}. */
    InMemorySource partition(String topic, int partition, long earliest) {
        String key = TopicPartitionKey.of(topic, partition);
        records.put(key, new TreeMap<>());
        offsets.put(key, new KafkaOffsets(earliest, earliest));
        return this;
    }

    /** Appends a record at {@code offset}, which must be at or beyond the latest offset; the latest becomes {@code offset + 1}. */
    SourceRecord append(String partitionKey, long offset, long timestampMs, String key, String value) {
        KafkaOffsets now = offsets.get(partitionKey);
        if (offset < now.latest()) {
            throw new IllegalArgumentException(partitionKey + ": offset " + offset + " is below the latest " + now.latest());
        }
        TopicPartitionKey tp = TopicPartitionKey.parse(partitionKey);
        SourceRecord record = new SourceRecord(tp.topic(), tp.partition(), offset, timestampMs,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), Map.of());
        records.get(partitionKey).put(offset, record);
        offsets.put(partitionKey, new KafkaOffsets(now.earliest(), offset + 1));
        return record;
    }

    /** Moves the latest offset past a gap at the end (a transaction marker, say), with no record. */
    void skipTo(String partitionKey, long latest) {
        KafkaOffsets now = offsets.get(partitionKey);
        offsets.put(partitionKey, new KafkaOffsets(now.earliest(), Math.max(now.latest(), latest)));
    }

    /** Called with the ends of every group-offset commit, before it is accepted. */
    void checkCommits(Consumer<Map<String, Long>> check) {
        this.commitCheck = check;
    }

    /** Every {@link #read} so far, in order. */
    List<Map<String, PartitionRange>> reads() {
        return reads;
    }

    /** The consumer group's offsets: the ends of the last accepted commit of each partition. */
    Map<String, Long> groupOffsets() {
        return groupOffsets;
    }

    @Override
    public Map<String, KafkaOffsets> offsets() {
        offsetsAsked++;
        return new TreeMap<>(offsets);
    }

    /** How often the engine asked for the partitions' offsets. */
    int offsetsAsked() {
        return offsetsAsked;
    }

    @Override
    public void read(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler) {
        reads.add(new TreeMap<>(ranges));
        List<Iterator<SourceRecord>> partitions = new ArrayList<>();
        ranges.forEach((p, r) -> {
            KafkaOffsets held = offsets.get(p);
            if (held == null || r.start() < held.earliest() || r.end() > held.latest()) {
                throw new AssertionError("read of " + p + " [" + r.start() + ", " + r.end() + ") beyond what the source holds: " + held);
            }
            partitions.add(records.get(p).subMap(r.start(), r.end()).values().iterator());
        });
        // One record of each partition in turn, as a consumer's polls mix partitions.
        boolean delivered = true;
        while (delivered) {
            delivered = false;
            for (Iterator<SourceRecord> it : partitions) {
                if (it.hasNext()) {
                    handler.accept(it.next());
                    delivered = true;
                }
            }
        }
    }

    @Override
    public void commitGroupOffsets(Map<String, ChainPoint> points) {
        Map<String, Long> ends = new LinkedHashMap<>();
        points.forEach((p, point) -> ends.put(p, point.offset()));
        commitCheck.accept(ends);
        groupOffsets.putAll(ends);
        groupPoints.putAll(points);
    }

    /** From now on the group's commits are read back as this job's, as a worker that knows its job's identity reads them. */
    InMemorySource groupCarriesTheJob() {
        groupCarriesTheJob = true;
        return this;
    }

    @Override
    public Map<String, ChainPoint> committedChainPoints() {
        return groupCarriesTheJob ? new TreeMap<>(groupPoints) : Map.of();
    }

    /** Records below {@code offset} of a partition age out (retention): its earliest offset becomes {@code offset}. */
    void ageOut(String partitionKey, long offset) {
        KafkaOffsets now = offsets.get(partitionKey);
        records.get(partitionKey).headMap(offset).clear();
        offsets.put(partitionKey, new KafkaOffsets(Math.max(now.earliest(), offset), now.latest()));
    }

    @Override
    public void close() {
    }
}
