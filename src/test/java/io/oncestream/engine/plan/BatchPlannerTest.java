package io.oncestream.engine.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.StartingOffsets;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.PartitionRange;

/** The recovery table of {@link BatchPlanner}, row by row, and the rules of a new batch. */
class BatchPlannerTest {

    private static final Map<String, KafkaOffsets> KAFKA = Map.of(
            "orders-0", new KafkaOffsets(0, 100),
            "orders-1", new KafkaOffsets(0, 50));

    @Test
    void freshCheckpointStartsAtEarliest() {
        Plan plan = BatchPlanner.plan(input(null, null, KAFKA, StartingOffsets.EARLIEST, 1000, true));
        assertThat(plan).isEqualTo(new Plan.Next(0, offsets(Map.of(
                "orders-0", new PartitionRange(0, 100, 0), "orders-1", new PartitionRange(0, 50, 0)))));
    }

    @Test
    void freshCheckpointWithLatestStartsAtTheEndAndIsIdle() {
        Plan plan = BatchPlanner.plan(input(null, null, KAFKA, StartingOffsets.LATEST, 1000, true));
        assertThat(plan).isEqualTo(new Plan.Idle(0));
    }

    @Test
    void committedBatchIsFollowedByTheNextFromItsEnds() {
        var o = entry(4, Map.of("orders-0", new PartitionRange(10, 60, 5), "orders-1", new PartitionRange(0, 20, 7)));
        var c = commit(4, Map.of("orders-0", 900L, "orders-1", 800L));
        Plan plan = BatchPlanner.plan(input(o, c, KAFKA, StartingOffsets.EARLIEST, 1000, true));
        assertThat(plan).isEqualTo(new Plan.Next(5, offsets(Map.of(
                "orders-0", new PartitionRange(60, 100, 900), "orders-1", new PartitionRange(20, 50, 800)))));
    }

    @Test
    void openBatchIsReplayedWithExactlyItsRanges() {
        var o = entry(5, Map.of("orders-0", new PartitionRange(60, 70, 900)));
        var c = commit(4, Map.of("orders-0", 900L));
        // Kafka has moved on since; the replay must not.
        Plan plan = BatchPlanner.plan(input(o, c, KAFKA, StartingOffsets.EARLIEST, 1000, true));
        assertThat(plan).isEqualTo(new Plan.Replay(5, o.get().value()));
    }

    @Test
    void firstBatchOpenIsReplayed() {
        var o = entry(0, Map.of("orders-0", new PartitionRange(0, 70, 0)));
        assertThat(BatchPlanner.plan(input(o, null, KAFKA, StartingOffsets.EARLIEST, 1000, true)))
                .isEqualTo(new Plan.Replay(0, o.get().value()));
    }

    @Test
    void logsThatDoNotBelongTogetherAreRefused() {
        var o = entry(7, Map.of("orders-0", new PartitionRange(0, 70, 0)));
        assertThatThrownBy(() -> BatchPlanner.plan(input(o, commit(4, Map.of()), KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("offset log ends at batch 7 but the commit log at batch 4");
        assertThatThrownBy(() -> BatchPlanner.plan(input(o, commit(8, Map.of()), KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class);
        assertThatThrownBy(() -> BatchPlanner.plan(input(entry(3, Map.of()), null, KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class);
        assertThatThrownBy(() -> BatchPlanner.plan(input(null, commit(2, Map.of()), KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("offset log is empty");
    }

    @Test
    void newPartitionStartsAtEarliestEvenWithStartingOffsetsLatest() {
        var o = entry(0, Map.of("orders-0", new PartitionRange(0, 100, 3)));
        var c = commit(0, Map.of("orders-0", 3L));
        Map<String, KafkaOffsets> grown = Map.of("orders-0", new KafkaOffsets(0, 100), "orders-1", new KafkaOffsets(5, 50));
        Plan plan = BatchPlanner.plan(input(o, c, grown, StartingOffsets.LATEST, 1000, true));
        assertThat(plan).isEqualTo(new Plan.Next(1, offsets(Map.of(
                "orders-0", new PartitionRange(100, 100, 3), "orders-1", new PartitionRange(5, 50, 0)))));
    }

    @Test
    void agedOutOffsetsFailOrAreSkippedAndCounted() {
        var o = entry(0, Map.of("orders-0", new PartitionRange(0, 10, 0)));
        var c = commit(0, Map.of("orders-0", 1L));
        Map<String, KafkaOffsets> retained = Map.of("orders-0", new KafkaOffsets(40, 100));

        assertThatThrownBy(() -> BatchPlanner.plan(input(o, c, retained, StartingOffsets.EARLIEST, 1000, true)))
                .isInstanceOf(PlanningException.class)
                .hasMessageContaining("partition orders-0: offsets 10 to 39 are no longer in Kafka (earliest is 40)");

        Plan plan = BatchPlanner.plan(input(o, c, retained, StartingOffsets.EARLIEST, 1000, false));
        assertThat(plan).isInstanceOf(Plan.Next.class);
        BatchOffsets next = ((Plan.Next) plan).offsets();
        assertThat(next.partitions()).containsEntry("orders-0", new PartitionRange(40, 100, 1));
        assertThat(next.lostRecords()).isEqualTo(30);
    }

    @Test
    void vanishedPartitionOrTruncatedTopicIsAnError() {
        var o = entry(0, Map.of("gone-0", new PartitionRange(0, 10, 0)));
        var c = commit(0, Map.of());
        assertThatThrownBy(() -> BatchPlanner.plan(input(o, c, KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("partition gone-0 is in the checkpoint but no longer in Kafka");

        var ahead = entry(0, Map.of("orders-0", new PartitionRange(0, 500, 0)));
        assertThatThrownBy(() -> BatchPlanner.plan(input(ahead, c, KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("checkpoint is at offset 500 but Kafka ends at 100");
    }

    @Test
    void batchIsCappedAndSharedByBacklog() {
        Plan plan = BatchPlanner.plan(input(null, null, KAFKA, StartingOffsets.EARLIEST, 31, true));
        BatchOffsets offsets = ((Plan.Next) plan).offsets();
        assertThat(offsets.size()).isEqualTo(31);
        // 100:50 backlog -> 20.67 and 10.33 -> 20 + 10, the one left over goes to the first partition.
        assertThat(offsets.partitions()).containsEntry("orders-0", new PartitionRange(0, 21, 0))
                .containsEntry("orders-1", new PartitionRange(0, 10, 0));
    }

    @Test
    void capNeverExceedsWhatKafkaHasAndAlwaysMovesForward() {
        Map<String, KafkaOffsets> kafka = Map.of("t-0", new KafkaOffsets(0, 1), "t-1", new KafkaOffsets(0, 1),
                "t-2", new KafkaOffsets(0, 1000));
        Plan plan = BatchPlanner.plan(input(null, null, kafka, StartingOffsets.EARLIEST, 2, true));
        BatchOffsets offsets = ((Plan.Next) plan).offsets();
        assertThat(offsets.size()).isEqualTo(2);
        offsets.partitions().forEach((p, r) -> assertThat(r.end()).isLessThanOrEqualTo(kafka.get(p).latest()));
    }

    @Test
    void recoveryIsDecidedFromTheLogsAloneAndPlanningFollowsIt() {
        var o = entry(4, Map.of("orders-0", new PartitionRange(10, 20, 7)));
        assertThat(BatchPlanner.recover(Optional.empty(), Optional.empty())).isInstanceOf(Recovery.FirstBatch.class);
        assertThat(BatchPlanner.recover(o, commit(3, Map.of()))).isEqualTo(new Recovery.Replay(4, o.get().value()));
        Recovery next = BatchPlanner.recover(o, commit(4, Map.of("orders-0", 99L)));
        assertThat(next).isInstanceOf(Recovery.NextBatch.class);
        assertThat(((Recovery.NextBatch) next).batchId()).isEqualTo(5);
        assertThatThrownBy(() -> BatchPlanner.recover(o, commit(2, Map.of()))).isInstanceOf(PlanningException.class);
        // plan() acts on the same decision: the replay is of batch 4, the next batch is 5 from offset 20 with base 99.
        assertThat(BatchPlanner.plan(input(o, commit(3, Map.of()), KAFKA, StartingOffsets.EARLIEST, 10, true)))
                .isEqualTo(new Plan.Replay(4, o.get().value()));
        Plan.Next planned = (Plan.Next) BatchPlanner.plan(input(o, commit(4, Map.of("orders-0", 99L)),
                Map.of("orders-0", new KafkaOffsets(0, 30)), StartingOffsets.EARLIEST, 10, true));
        assertThat(planned.batchId()).isEqualTo(5);
        assertThat(planned.offsets().partitions().get("orders-0")).isEqualTo(new PartitionRange(20, 30, 99));
    }

    @Test
    void aSeededCheckpointContinuesEachChainFromItsSavepoint() {
        Map<String, KafkaOffsets> kafka = Map.of("orders-0", new KafkaOffsets(0, 100), "orders-1", new KafkaOffsets(0, 50),
                "orders-2", new KafkaOffsets(10, 40), "orders-3", new KafkaOffsets(5, 30));
        // orders-0 and -1 handed over; orders-2's old owner had committed nothing; orders-3 is new since the savepoint.
        Seed seed = new Seed(Map.of("orders-0", new ChainPoint(60, 900), "orders-1", new ChainPoint(50, 800)),
                "orders-2"::equals);
        Plan plan = BatchPlanner.plan(seeded(kafka, StartingOffsets.LATEST, seed));
        assertThat(plan).isEqualTo(new Plan.Next(0, offsets(Map.of(
                "orders-0", new PartitionRange(60, 100, 900),
                "orders-1", new PartitionRange(50, 50, 800),
                "orders-2", new PartitionRange(40, 40, 0),
                "orders-3", new PartitionRange(5, 30, 0)))));
        assertThat(BatchPlanner.plan(seeded(kafka, StartingOffsets.EARLIEST, seed))).isEqualTo(new Plan.Next(0, offsets(Map.of(
                "orders-0", new PartitionRange(60, 100, 900),
                "orders-1", new PartitionRange(50, 50, 800),
                "orders-2", new PartitionRange(10, 40, 0),
                "orders-3", new PartitionRange(5, 30, 0)))));
    }

    @Test
    void aSeedIsOnlyForTheFirstBatch() {
        var o = entry(0, Map.of("orders-0", new PartitionRange(60, 70, 900), "orders-1", new PartitionRange(50, 50, 800)));
        var c = commit(0, Map.of("orders-0", 950L, "orders-1", 800L));
        Seed seed = new Seed(Map.of("orders-0", new ChainPoint(60, 900), "orders-1", new ChainPoint(50, 800)), p -> false);
        Plan plan = BatchPlanner.plan(new BatchPlanner.Input(o, c, KAFKA, StartingOffsets.EARLIEST, 1000, true, 0, seed));
        assertThat(plan).isEqualTo(new Plan.Next(1, offsets(Map.of(
                "orders-0", new PartitionRange(70, 100, 950), "orders-1", new PartitionRange(50, 50, 800)))));
    }

    @Test
    void aSeededPartitionThatKafkaNoLongerHasIsAnError() {
        Seed seed = new Seed(Map.of("orders-7", new ChainPoint(5, 9)), p -> false);
        assertThatThrownBy(() -> BatchPlanner.plan(seeded(KAFKA, StartingOffsets.EARLIEST, seed)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("orders-7");
        Seed beyond = new Seed(Map.of("orders-1", new ChainPoint(70, 9)), p -> false);
        assertThatThrownBy(() -> BatchPlanner.plan(seeded(KAFKA, StartingOffsets.EARLIEST, beyond)))
                .isInstanceOf(PlanningException.class).hasMessageContaining("orders-1: the checkpoint is at offset 70");
    }

    private static BatchPlanner.Input seeded(Map<String, KafkaOffsets> kafka, StartingOffsets starting, Seed seed) {
        return new BatchPlanner.Input(Optional.empty(), Optional.empty(), kafka, starting, 1000, true, 0, seed);
    }

    private static BatchPlanner.Input input(Optional<BatchLog.Entry<BatchOffsets>> o, Optional<BatchLog.Entry<BatchCommit>> c,
            Map<String, KafkaOffsets> kafka, StartingOffsets starting, long max, boolean failOnDataLoss) {
        return new BatchPlanner.Input(o == null ? Optional.empty() : o, c == null ? Optional.empty() : c, kafka, starting, max,
                failOnDataLoss, 0);
    }

    private static Optional<BatchLog.Entry<BatchOffsets>> entry(long id, Map<String, PartitionRange> ranges) {
        return Optional.of(new BatchLog.Entry<>(id, offsets(ranges)));
    }

    private static BatchOffsets offsets(Map<String, PartitionRange> ranges) {
        return new BatchOffsets(ranges, 0, 0);
    }

    private static Optional<BatchLog.Entry<BatchCommit>> commit(long id, Map<String, Long> lastTimestamps) {
        return Optional.of(new BatchLog.Entry<>(id, new BatchCommit(0, 0, 0, 0, 0, lastTimestamps, 0)));
    }
}
