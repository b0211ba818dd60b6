package io.oncestream.engine.config;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How record values are decoded. */
public enum RecordFormat {
    @JsonProperty("json")
    JSON,
    @JsonProperty("string")
    STRING
}
