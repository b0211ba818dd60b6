package io.oncestream.engine.kafka;

import java.util.List;

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

    public boolean owns(String topic, int partition) {
        int i = sortedTopics.indexOf(topic);
        if (i < 0) {
            return false;
        }
        return (i + partition) % parallelism == workerIndex;
    }
}
