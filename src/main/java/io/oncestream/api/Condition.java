package io.oncestream.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Required;

/** A Kubernetes-style condition; {@code lastTransitionTime} changes only when {@code status} flips. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Condition {

    @Required
    @JsonPropertyDescription("Ready, Progressing, ConfigValid, SinkAvailable, SourceAvailable, Rescaling or Stalled.")
    public String type;

    @Required
    @JsonPropertyDescription("True, False or Unknown.")
    public String status;

    @JsonPropertyDescription("One CamelCase word for the last transition.")
    public String reason;

    @JsonPropertyDescription("What happened, for a person; names the field or object concerned.")
    public String message;

    @JsonPropertyDescription("When status last changed (RFC 3339).")
    public String lastTransitionTime;

    @JsonPropertyDescription("The spec generation this condition was computed from.")
    public Long observedGeneration;
}
