package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The protocol's MID_WRITE point: once, when about half of a batch's writes are acknowledged. */
class BatchWriteListenerTest {

    private final List<String> reached = new ArrayList<>();

    private BatchWriteListener listener(long plannedRecords) {
        ProtocolHooks hooks = (step, batchId) -> reached.add(step + " " + batchId);
        return new BatchWriteListener(7, plannedRecords, new Controls(hooks, new ProgressTracker("t/listener", 0, 1), () -> false, () -> 0L));
    }

    @Test
    void writesSentAfterTheReadReachTheMiddleAtHalfOfThem() {
        BatchWriteListener listener = listener(100);
        listener.total(80); // 20 records filtered out
        listener.acknowledged(39);
        assertThat(reached).isEmpty();
        listener.acknowledged(1);
        assertThat(reached).containsExactly("MID_WRITE 7");
        listener.acknowledged(40);
        assertThat(reached).as("once").hasSize(1);
    }

    @Test
    void writesFlushedDuringTheReadReachItAtHalfOfThePlannedRecords() {
        BatchWriteListener listener = listener(100);
        listener.acknowledged(49);
        assertThat(reached).isEmpty();
        listener.acknowledged(2);
        assertThat(reached).containsExactly("MID_WRITE 7");
        listener.total(100);
        assertThat(reached).hasSize(1);
    }

    /** Most records filtered out, every write flushed during the read: the middle was passed by the time their number is known. */
    @Test
    void aMiddlePassedBeforeTheReadEndedIsReachedWhenItEnds() {
        BatchWriteListener listener = listener(100);
        listener.acknowledged(30);
        assertThat(reached).as("30 of 100 planned").isEmpty();
        listener.total(30);
        assertThat(reached).containsExactly("MID_WRITE 7");
    }
}
