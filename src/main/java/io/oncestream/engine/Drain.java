package io.oncestream.engine;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.engine.plan.KafkaOffsets;

/**
 * {@code trigger.availableNow}: the latest offsets Kafka had when the run started are where
 * draining stops. Every later plan sees Kafka's offsets capped to these targets, and the run
 * completes once a plan finds nothing left below them.
 */
final class Drain {

    private Map<String, Long> targets;
    /** The offsets of the last plan, capped to the targets. */
    private Map<String, KafkaOffsets> lastCapped;

    /** Kafka's offsets capped to the targets; the first call sets them. */
    Map<String, KafkaOffsets> cap(Map<String, KafkaOffsets> kafka) {
        if (targets == null) {
            targets = new HashMap<>();
            kafka.forEach((p, o) -> targets.put(p, o.latest()));
        }
        Map<String, KafkaOffsets> capped = new TreeMap<>();
        kafka.forEach((p, o) -> capped.put(p, new KafkaOffsets(o.earliest(),
                Math.max(o.earliest(), Math.min(o.latest(), targets.getOrDefault(p, o.earliest()))))));
        lastCapped = capped;
        return capped;
    }

    /**
     * Whether the committed batches already reach every target, planned with the last plan's
     * offsets instead of asking Kafka again. The targets are last stable offsets Kafka had
     * reached when the run started, and a partition's last stable offset only grows, so capped
     * to the targets fresh latest offsets equal the last plan's: where those leave nothing to
     * read, fresh ones would not either. Asking would not be free: after the last batch the
     * consumer's fetch at the end of the topic waits on the broker for up to
     * {@code fetch.max.wait.ms} (10 ms by the worker's default, more if the job sets it), and
     * the offsets request queues behind it. Not before the consumer group was brought up to the
     * last commit ({@link BatchProtocol#groupResynced()}), which needs Kafka once.
     */
    boolean reached(BatchProtocol protocol) {
        return lastCapped != null && protocol.groupResynced() && protocol.idleAt(lastCapped);
    }
}
