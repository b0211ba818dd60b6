package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Cassandra write consistency levels. */
public enum Consistency {
    @JsonProperty("ONE")
    ONE,
    @JsonProperty("TWO")
    TWO,
    @JsonProperty("THREE")
    THREE,
    @JsonProperty("QUORUM")
    QUORUM,
    @JsonProperty("ALL")
    ALL,
    @JsonProperty("LOCAL_QUORUM")
    LOCAL_QUORUM,
    @JsonProperty("EACH_QUORUM")
    EACH_QUORUM,
    @JsonProperty("LOCAL_ONE")
    LOCAL_ONE
}
