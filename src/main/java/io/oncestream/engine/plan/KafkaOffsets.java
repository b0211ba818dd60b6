package io.oncestream.engine.plan;

/**
 * What Kafka holds of one partition now.
 *
 * @param earliest first offset still in the log (retention moves it)
 * @param latest   offset after the last readable record: the last stable offset under {@code read_committed}
 */
public record KafkaOffsets(long earliest, long latest) {
}
