package io.oncestream.engine;

import java.util.Map;
import java.util.function.Consumer;

import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.transform.SourceRecord;

/** Where batches read from: Kafka in production, keyed by {@code topic-partition}. */
public interface RecordSource extends AutoCloseable {

    /** Earliest and latest (last stable) offsets of every partition this worker owns now. */
    Map<String, KafkaOffsets> offsets();

    /**
     * Delivers every record with {@code start <= offset < end} of each range, in offset order
     * per partition, and returns when each partition's position reached its end.
     */
    void read(Map<String, PartitionRange> ranges, Consumer<SourceRecord> handler);

    /** Records committed ends as the consumer group's offsets, for lag tools; never read back. */
    void commitGroupOffsets(Map<String, Long> ends);

    @Override
    void close();
}
