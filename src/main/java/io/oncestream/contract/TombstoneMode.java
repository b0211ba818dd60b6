package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What a record with a null value (a Kafka tombstone, as compacted topics carry) does. */
public enum TombstoneMode {
    /** Nothing is written; the record counts as filtered out. */
    @JsonProperty("ignore")
    IGNORE,
    /** The row whose primary key the columns map from the record (its {@code key}) is deleted. */
    @JsonProperty("delete")
    DELETE,
    /** The record is a bad record: the dead-letter table, or the job fails, as {@code deadLetter.mode} says. */
    @JsonProperty("deadLetter")
    DEAD_LETTER
}
