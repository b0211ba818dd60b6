package io.oncestream.operator.status;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.oncestream.api.Condition;
import io.oncestream.api.ConditionReason;
import io.oncestream.api.ConditionType;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;

/**
 * The Kubernetes Events a status change deserves: one when the phase changes, one when the
 * spec stops being accepted (invalid or refused), one when a rescale starts and when it ends,
 * one when the autoscaler decides one. Nothing for an unchanged status, so a
 * steady job emits no events.
 */
public final class PhaseEvents {

    /** An event to record on the StreamJob. */
    public record JobEvent(String type, String reason, String message) {
    }

    private PhaseEvents() {
    }

    public static List<JobEvent> between(StreamJobStatus previous, StreamJobStatus projected) {
        List<JobEvent> events = new ArrayList<>();
        Phase before = previous == null ? null : previous.phase;
        Condition configBefore = previous == null ? null : previous.condition(ConditionType.ConfigValid).orElse(null);
        Condition config = projected.condition(ConditionType.ConfigValid).orElse(null);
        if (config != null && "False".equals(config.status)
                && (configBefore == null || !"False".equals(configBefore.status) || !Objects.equals(configBefore.message, config.message))) {
            events.add(new JobEvent("Warning", config.reason, config.message));
        }
        Condition rescaleBefore = previous == null ? null : previous.condition(ConditionType.Rescaling).orElse(null);
        Condition rescale = projected.condition(ConditionType.Rescaling).orElse(null);
        if (rescale != null && (rescaleBefore == null || !Objects.equals(rescaleBefore.reason, rescale.reason))) {
            if (ConditionReason.StoppingAtBarrier.name().equals(rescale.reason)) {
                events.add(new JobEvent("Normal", "RescaleStarted", rescale.message));
            } else if (ConditionReason.RescaleCompleted.name().equals(rescale.reason)) {
                events.add(new JobEvent("Normal", "RescaleCompleted", rescale.message));
            }
        }
        Integer scaledBefore = previous == null || previous.autoscaler == null ? null : previous.autoscaler.rescales;
        if (projected.autoscaler != null && projected.autoscaler.rescales != null
                && !projected.autoscaler.rescales.equals(scaledBefore)) {
            events.add(new JobEvent("Normal", "Autoscaled", projected.autoscaler.lastDecision));
        }
        if (projected.phase != null && projected.phase != before) {
            Condition ready = projected.condition(ConditionType.Ready).orElse(null);
            String why = ready == null ? "" : ": " + ready.message;
            boolean bad = projected.phase == Phase.Failed || projected.phase == Phase.Degraded;
            events.add(new JobEvent(bad ? "Warning" : "Normal", "Phase" + projected.phase,
                    "phase " + (before == null ? "(none)" : before) + " -> " + projected.phase + why));
        }
        return events;
    }
}
