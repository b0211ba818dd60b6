package io.oncestream.engine.kafka;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.plan.Seed;

/**
 * Which worker reads which partition: partition {@code p} of the {@code i}-th topic (topics
 * sorted by name) belongs to worker {@code (i + p) mod parallelism}. Static and deterministic,
 * and adding partitions to a topic never moves an existing partition to another worker.
 */
public record PartitionAssignment(List<String> sortedTopics, int parallelism, int workerIndex) {

    public PartitionAssignment {
        sortedTopics = sortedTopics.stream().sorted().toList();
        if (parallelism < 1 || workerIndex < 0 || workerIndex >= parallelism) {
            throw new IllegalArgumentException("worker index " + workerIndex + " is not in 0.." + (parallelism - 1));
        }
    }

    /**
     * How worker {@code workerIndex} of a job's next epoch starts from {@code savepoint}: the
     * savepoint's entries of the partitions it owns, and, for a partition the savepoint lacks,
     * {@code startingOffsets} where the partition's old owner had committed nothing.
     */
    public Seed seed(Savepoint savepoint) {
        Map<String, ChainPoint> owned = new TreeMap<>();
        savepoint.partitions().forEach((key, point) -> {
            TopicPartitionKey tp = TopicPartitionKey.parse(key);
            if (owns(tp.topic(), tp.partition())) {
                owned.put(key, point);
            }
        });
        return new Seed(owned, key -> {
            TopicPartitionKey tp = TopicPartitionKey.parse(key);
            for (int old = 0; old < savepoint.fromParallelism(); old++) {
                if (new PartitionAssignment(sortedTopics, savepoint.fromParallelism(), old).owns(tp.topic(), tp.partition())) {
                    return savepoint.committedNothing(old);
                }
            }
            return false;
        });
    }

    public boolean owns(String topic, int partition) {
        int i = sortedTopics.indexOf(topic);
        if (i < 0) {
            return false;
        }
        return (i + partition) % parallelism == workerIndex;
    }
}
