package io.oncestream.operator.handoff;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.javaoperatorsdk.operator.processing.event.ResourceID;

/**
 * Per job, the epoch for which some worker was last seen reporting a seal while the epoch
 * before it was applied. A hand-off with such a seal goes on whatever the spec and the stored
 * status say now (a revert, a lost status patch), or the sealed workers would stay parked.
 *
 * <p>The epoch is kept, not only that a seal was seen: the seals of a hand-off are still
 * reported by its parked workers after its savepoint is applied, and were they counted once
 * the next epoch is applied, a job whose new workers all answer at once would start a second
 * hand-off that nothing asked for. Kept in memory: an operator that restarts polls the
 * workers again and finds the seals again.
 */
final class SealsSeen {

    private final Map<ResourceID, Integer> nextEpochs = new ConcurrentHashMap<>();

    /** Whether a seal for the epoch after {@code appliedEpoch} was seen: that hand-off must go on. */
    boolean pending(ResourceID job, int appliedEpoch) {
        Integer next = nextEpochs.get(job);
        return next != null && next == appliedEpoch + 1;
    }

    /** What a poll of the job's workers found while {@code appliedEpoch} was applied: a seal for the next epoch or none. */
    void observed(ResourceID job, int appliedEpoch, boolean sealedForNext) {
        if (sealedForNext) {
            nextEpochs.put(job, appliedEpoch + 1);
        } else {
            nextEpochs.remove(job);
        }
    }
}
