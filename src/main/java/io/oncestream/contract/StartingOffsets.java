package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Where a job without a checkpoint starts reading. */
public enum StartingOffsets {
    @JsonProperty("earliest")
    EARLIEST,
    @JsonProperty("latest")
    LATEST
}
