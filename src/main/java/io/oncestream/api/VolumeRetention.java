package io.oncestream.api;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What happens to checkpoint volumes when a job is deleted, or when a rescale removes their workers. */
public enum VolumeRetention {
    @JsonProperty("Retain")
    RETAIN,
    @JsonProperty("Delete")
    DELETE
}
