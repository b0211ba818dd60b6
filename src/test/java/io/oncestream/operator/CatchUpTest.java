package io.oncestream.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class CatchUpTest {

    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final AtomicInteger jobs = new AtomicInteger();
    private final AtomicInteger counts = new AtomicInteger();
    private final CatchUp catchUp = new CatchUp(clock::get, 1_000_000_000L);

    private String reconciled(int reconciled) {
        return catchUp.reconciled(reconciled, () -> {
            counts.incrementAndGet();
            return jobs.get();
        });
    }

    @Test
    void saysOnceWhenEveryJobWasReconciledWithTheTimesSinceTheFirstReconcileAndTheProcessStart() {
        jobs.set(3);
        assertNull(reconciled(1));
        clock.addAndGet(1_500_000_000L);
        assertNull(reconciled(2));
        clock.addAndGet(1_000_000_000L);
        assertEquals("Caught up: each of the 3 StreamJobs reconciled at least once, 2.5 s after the first reconcile"
                + " (6.5 s after the process started)", reconciled(3));
        assertNull(reconciled(3), "said once");
        assertEquals(2, counts.get(), "the jobs were counted at the first reconcile and when the reconciled ones reached that count");
    }

    @Test
    void aJobCreatedMeanwhileIsWaitedFor() {
        jobs.set(2);
        assertNull(reconciled(1));
        jobs.set(3);
        assertNull(reconciled(2), "the count reached: the jobs are counted again, and one more exists");
        assertEquals("Caught up: each of the 3 StreamJobs reconciled at least once, 0.0 s after the first reconcile"
                + " (4.0 s after the process started)", reconciled(3));
    }

    @Test
    void aJobDeletedBeforeItsFirstReconcileIsNoLongerWaitedForOnceTheJobsAreCountedAgain() {
        jobs.set(CatchUp.RECOUNT_EVERY + 10);
        assertNull(reconciled(1));
        jobs.set(5); // most were deleted before they were reconciled
        for (int i = 1; i < CatchUp.RECOUNT_EVERY; i++) {
            assertNull(reconciled(4), "counted only at the first reconcile so far");
        }
        assertEquals(1, counts.get());
        assertNull(reconciled(4)); // the recount: 5 exist, 4 reconciled
        assertEquals(2, counts.get());
        assertEquals("Caught up: each of the 5 StreamJobs reconciled at least once, 0.0 s after the first reconcile"
                + " (4.0 s after the process started)", reconciled(5));
    }
}
