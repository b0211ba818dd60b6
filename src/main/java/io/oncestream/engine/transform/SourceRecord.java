package io.oncestream.engine.transform;

import java.util.Map;

import io.oncestream.contract.TopicPartitionKey;


/**
 * A Kafka record as the engine sees it.
 *
 * @param topic       topic name
 * @param partition   partition number
 * @param offset      offset in the partition
 * @param timestampMs record timestamp, ms since the epoch
 * @param key         raw key bytes, or null
 * @param value       raw value bytes, or null (a tombstone)
 * @param headers     headers as UTF-8 text; for repeated names the last wins
 */
public record SourceRecord(String topic, int partition, long offset, long timestampMs, byte[] key, byte[] value,
        Map<String, String> headers) {

    /** {@code topic-partition}, the key of this record's partition in checkpoints. */
    public String partitionKey() {
        return TopicPartitionKey.of(topic, partition);
    }
}
