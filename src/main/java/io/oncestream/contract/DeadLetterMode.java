package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What happens to a bad record. */
public enum DeadLetterMode {
    @JsonProperty("fail")
    FAIL,
    @JsonProperty("table")
    TABLE
}
