package io.oncestream.contract;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What a worker does after a permanent failure (a transient one is always retried). */
public enum RestartMode {
    /** Stay up reporting FAILED with the cause until a person changes something. */
    @JsonProperty("Never")
    NEVER,
    /** Start the engine again after a pause that doubles up to {@code restart.maxBackoff}. */
    @JsonProperty("Backoff")
    BACKOFF
}
