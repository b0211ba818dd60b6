package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.CheckpointLockedException;
import io.oncestream.engine.checkpoint.CheckpointUnavailableException;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.failure.OncestreamException;
import io.oncestream.engine.plan.PlanningException;

/** The list of docs/worker.md's "Failures" table, kind by kind. */
class FailureKindTest {

    private static final Path LOCK = Path.of("/checkpoint/.lock");

    @Test
    void whatMayPassIsTransient() {
        assertThat(FailureKind.of(new CheckpointLockedException(LOCK, "pid 7 on host paid-orders-0 since 2026-12-05T16:40:00Z")))
                .isEqualTo(FailureKind.TRANSIENT);
        assertThat(FailureKind.of(new CheckpointUnavailableException(Path.of("/checkpoint/offsets/7"),
                "cannot write: No space left on device", null))).isEqualTo(FailureKind.TRANSIENT);
        assertThat(FailureKind.of(new SourceException("Kafka: timed out listing offsets", null))).isEqualTo(FailureKind.TRANSIENT);
        assertThat(FailureKind.of(new IllegalStateException("something not foreseen"))).isEqualTo(FailureKind.TRANSIENT);
    }

    @Test
    void whatNeedsAPersonIsPermanent() {
        assertThat(FailureKind.of(new InvalidConfigException("sink.columns.amount", "does not compile")))
                .isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new BadRecordException("bad record at orders-0 offset 17: ..."))).isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new SinkException("Cassandra refused a write to shop.paid_orders: unauthorized", null)))
                .isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new CheckpointException(Path.of("/checkpoint/commits/3"), "does not parse")))
                .isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new PlanningException("partition orders-0: offsets 0 to 100 are no longer in Kafka")))
                .isEqualTo(FailureKind.PERMANENT);
    }

    /** The worker logs these by their message alone; anything else, with its stack trace. */
    @Test
    void theFailuresOncestreamExplainsShareOneBase() {
        assertThat(java.util.List.of(new InvalidConfigException("sink.table", "missing"), new BadRecordException("bad"),
                new SinkException("refused", null), new CheckpointException(Path.of("/checkpoint/commits/3"), "does not parse"),
                new PlanningException("offsets lost"),
                new CheckpointUnavailableException(Path.of("/checkpoint/offsets/7"), "cannot write", null),
                new CheckpointLockedException(LOCK, "pid 7"))).allSatisfy(e -> assertThat(e).isInstanceOf(OncestreamException.class));
        assertThat(new CheckpointLockedException(LOCK, "pid 7").permanent()).isFalse();
        assertThat(new SourceException("Kafka: timed out listing offsets", null)).isNotInstanceOf(OncestreamException.class);
    }
}
