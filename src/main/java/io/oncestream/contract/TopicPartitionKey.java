package io.oncestream.contract;

/**
 * A Kafka partition as checkpoints, progress documents and the job's status name it:
 * {@code topic-partition}, e.g. {@code orders-3}. Topic names may contain {@code -}, partition
 * numbers never do, so the last {@code -} separates them.
 */
public record TopicPartitionKey(String topic, int partition) {

    public TopicPartitionKey {
        if (topic == null || topic.isEmpty() || partition < 0) {
            throw new IllegalArgumentException("not a Kafka partition: topic '" + topic + "', partition " + partition);
        }
    }

    /** The key of partition {@code partition} of {@code topic}. */
    public static String of(String topic, int partition) {
        return topic + "-" + partition;
    }

    /** Reads a key written by {@link #of}; anything else is an {@link IllegalArgumentException} naming it. */
    public static TopicPartitionKey parse(String key) {
        int dash = key.lastIndexOf('-');
        if (dash <= 0 || dash == key.length() - 1) {
            throw new IllegalArgumentException("'" + key + "' is not a topic-partition key");
        }
        try {
            return new TopicPartitionKey(key.substring(0, dash), Integer.parseInt(key.substring(dash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + key + "' is not a topic-partition key");
        }
    }

    @Override
    public String toString() {
        return of(topic, partition);
    }
}
