package io.oncestream.engine;

import java.util.Map;
import java.util.function.Consumer;

import io.oncestream.contract.ChainPoint;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.transform.SourceRecord;

/** Where batches read from: Kafka in production, keyed by {@code topic-partition}. */
public interface RecordSource extends AutoCloseable {

    /** Earliest and latest (last stable) offsets of every partition this worker owns now. */
    Map<String, KafkaOffsets> offsets();

    /**
     * As {@link #offsets()}, when the next batch starts at {@code starts} (the ends of the last
     * committed batch, by partition; null when it is not known, as for a replay or a first
     * batch): a source may then answer from what it has already fetched, with latest offsets
     * Kafka had a moment ago rather than now, and the earliest offset of a partition no lower
     * than what it still holds from its start.
     */
    default Map<String, KafkaOffsets> offsets(Map<String, Long> starts) {
        return offsets();
    }

    /**
     * Delivers every record with {@code start <= offset < end} of each range, in offset order
     * per partition, and returns when each partition's position reached its end.
     */
    void read(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler);

    /**
     * Records committed chain points (a committed batch's ends and last timestamps) as the
     * consumer group's offsets: for lag tools, and read back only to recover a lost checkpoint.
     */
    void commitGroupOffsets(Map<String, ChainPoint> points);

    /**
     * The chain points this job committed to its consumer group for the partitions it owns now:
     * what a checkpoint that lost its volume goes on from. Empty where the group holds none of
     * this job's (another job of the same name, an older worker, a worker run by hand).
     */
    default Map<String, ChainPoint> committedChainPoints() {
        return Map.of();
    }

    @Override
    void close();
}
