package io.oncestream.engine;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;
import io.oncestream.engine.transform.SourceRecord;

/** Where batches read from: Kafka in production, keyed by {@code topic-partition}. */
public interface RecordSource extends AutoCloseable {

    /** Earliest and latest (last stable) offsets of every partition this worker owns now. */
    Map<String, KafkaOffsets> offsets();

    /**
     * For a continuous run's next batch, instead of {@link #offsets()}: fetches on from
     * {@code starts} (the ends of the last committed batch, one for every partition this worker
     * owns) without handing any record on, and tells how far the next batch can read from what is
     * fetched. Waits up to {@code wait} for records when none are fetched yet, and stops fetching
     * at {@code maxRecords}. The next {@link #read} of ranges that start at {@code starts} and end
     * at most at {@link Fetched#readable()} takes the fetched records without asking Kafka again.
     * Empty when the source cannot tell without asking Kafka for its offsets (nothing asked
     * yet, partitions that changed, a fetch that failed, such as one below the earliest offset);
     * the caller then calls {@link #offsets()}.
     */
    default Optional<Fetched> fetchAhead(Map<String, Long> starts, long maxRecords, Duration wait) {
        return Optional.empty();
    }

    /**
     * What {@link #fetchAhead} found, per partition.
     *
     * @param readable the earliest offset as last asked, and the end of the records fetched: never
     *                 beyond the last stable offset, so ranges up to it read the same records again
     * @param reported the earliest offset as last asked, and the last stable offset as the fetches
     *                 reported it (for the job's lag)
     */
    record Fetched(Map<String, KafkaOffsets> readable, Map<String, KafkaOffsets> reported) {
    }

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
