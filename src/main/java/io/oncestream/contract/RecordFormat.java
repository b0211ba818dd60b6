package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How record values are decoded. */
public enum RecordFormat {
    @JsonProperty("json")
    JSON,
    @JsonProperty("string")
    STRING
}
