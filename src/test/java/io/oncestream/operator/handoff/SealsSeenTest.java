package io.oncestream.operator.handoff;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.javaoperatorsdk.operator.processing.event.ResourceID;

/**
 * The seals the operator remembers between reconciles, in the order the reconciler asks:
 * {@code decide} with the applied epoch read at the start of a reconcile, then {@code observe}
 * with the same applied epoch and what the workers said.
 */
class SealsSeenTest {

    private static final ResourceID JOB = new ResourceID("paid-orders", "ns");
    private static final ResourceID OTHER = new ResourceID("paid-orders", "other-ns");

    @Test
    void aSealForTheNextEpochKeepsItsHandoffGoingUntilNoWorkerReportsOne() {
        SealsSeen seen = new SealsSeen();
        assertThat(seen.pending(JOB, 2)).isFalse();
        seen.observed(JOB, 2, true); // a worker of epoch 2 sealed for epoch 3; the spec is then reverted
        assertThat(seen.pending(JOB, 2)).as("the hand-off to epoch 3 goes on").isTrue();
        assertThat(seen.pending(OTHER, 2)).as("another job").isFalse();
        seen.observed(JOB, 2, false); // the sealed worker answers no more with its seal
        assertThat(seen.pending(JOB, 2)).isFalse();
    }

    /**
     * The reconcile that takes epoch 3's savepoint still reads epoch 2 as applied, and its parked
     * workers still report their seals for epoch 3. In the next reconcile epoch 3 is applied:
     * those seals are of the hand-off just done, and must not start a hand-off to epoch 4 (they
     * did when only "a seal was seen" was kept, when all of epoch 3's workers answered by then).
     */
    @Test
    void theSealsOfAHandoffJustAppliedDoNotStartAnother() {
        SealsSeen seen = new SealsSeen();
        seen.observed(JOB, 2, true); // the savepoint of epoch 3 is taken and applied in this reconcile
        assertThat(seen.pending(JOB, 3)).as("decide, with epoch 3 applied").isFalse();
        seen.observed(JOB, 3, false); // the parked workers' seals are for epoch 3, not 4
        assertThat(seen.pending(JOB, 3)).isFalse();
        seen.observed(JOB, 3, true); // a real hand-off to epoch 4 later
        assertThat(seen.pending(JOB, 3)).isTrue();
        assertThat(seen.pending(JOB, 4)).as("and once epoch 4 is applied, no further one").isFalse();
    }
}
