package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.engine.plan.BatchPlanner;
import io.oncestream.engine.plan.Recovery;

/**
 * The committed golden volume of a rescaled worker ({@code src/test/resources/checkpoint/golden-epochs}):
 * worker 1 of job {@code shop/paid-orders}, whose epoch 0 (2 workers, batches 0 and 1 committed)
 * was sealed at the barrier for epoch 1, and whose epoch 1 (3 workers, seeded from the savepoint)
 * has its batch 0 open. The formats of {@code sealed} and {@code savepoint} are API: a new build
 * must read these files as they are.
 */
class GoldenEpochsTest {

    private static final String JOB = "shop/paid-orders";
    private static final List<String> TOPICS = List.of("orders", "payments");
    private static final Savepoint SAVEPOINT = new Savepoint(JOB, 1, 2, 3, Map.of(
            "orders-0", new ChainPoint(310, 1764700000300000L),
            "orders-1", new ChainPoint(200, 1764700000200500L),
            "payments-0", new ChainPoint(80, 1764700000456000L)), List.of(4L, 1L));

    @TempDir
    Path dir;

    @Test
    void theSealAndTheSavepointReadAsWritten() {
        Path volume = copy();
        assertThat(CheckpointEpochs.present(volume)).containsExactly(0, 1);
        assertThat(Checkpoint.readSeal(volume)).contains(new CheckpointSeal(1, 1, Map.of(
                "orders-1", new ChainPoint(200, 1764700000200500L),
                "payments-0", new ChainPoint(80, 1764700000456000L)), 1764700001500L));
        CheckpointContents epoch0 = CheckpointContents.read(volume);
        CheckpointSeal fromLogs = epoch0.commits().get(1L).seal(1, 1, epoch0.offsets().get(1L), 1764700001500L);
        assertThat(Checkpoint.readSeal(volume)).as("the seal is the last commit's chain points").contains(fromLogs);
        assertThat(Savepoint.decode(volume.resolve("epoch-1/savepoint"), read(volume.resolve("epoch-1/savepoint"))))
                .isEqualTo(SAVEPOINT);
        assertThat(Savepoint.decode(Path.of("x"), SAVEPOINT.encode())).isEqualTo(SAVEPOINT);
    }

    @Test
    void epochOneOpensWithItsSavepointAndReplaysItsOpenBatch() {
        Path volume = copy();
        Path epoch1 = CheckpointEpochs.check(volume, 1);
        assertThat(epoch1).isEqualTo(volume.resolve("epoch-1"));
        try (Checkpoint checkpoint = Checkpoint.open(epoch1, new CheckpointMetadata(1, JOB, TOPICS, 3, 1), SAVEPOINT,
                DurableFiles.synced())) {
            assertThat(checkpoint.seal()).isEmpty();
            Recovery recovery = BatchPlanner.recover(checkpoint.offsets().latest(), checkpoint.commits().latest());
            assertThat(recovery).isEqualTo(new Recovery.Replay(0, new BatchOffsets(Map.of(
                    "orders-1", new PartitionRange(200, 260, 1764700000200500L),
                    "payments-0", new PartitionRange(80, 85, 1764700000456000L)), 0, 1764700003000L)));
        }
    }

    @Test
    void aStaleConfigurationIsRefusedAndTheSealedEpochIsNeverPlannedAgain() {
        Path volume = copy();
        assertThatThrownBy(() -> CheckpointEpochs.check(volume, 0)).isInstanceOf(CheckpointException.class)
                .hasMessage(volume.resolve("epoch-1") + ": is the checkpoint of epoch 1, but this worker was configured for"
                        + " epoch 0: its configuration is older than its checkpoint (a worker of an earlier rescale?)");
        Savepoint other = new Savepoint(JOB, 1, 2, 3, Map.of("orders-1", new ChainPoint(190, 1L)), List.of(4L, 0L));
        assertThatThrownBy(() -> Checkpoint.open(volume.resolve("epoch-1"), new CheckpointMetadata(1, JOB, TOPICS, 3, 1), other,
                DurableFiles.synced())).isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(volume.resolve("epoch-1/savepoint") + ": was seeded from another savepoint");
        assertThatThrownBy(() -> CheckpointEpochs.check(volume, 2)).as("epoch 0 is sealed, epoch 1 is not")
                .isInstanceOf(CheckpointException.class)
                .hasMessageStartingWith(volume.resolve("epoch-1/sealed") + ": missing: epoch 1's checkpoint was not sealed");
    }

    private Path copy() {
        Path golden;
        try {
            golden = Path.of(GoldenEpochsTest.class.getResource("/checkpoint/golden-epochs").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        Path target = dir.resolve("volume");
        try (Stream<Path> all = Files.walk(golden)) {
            for (Path file : all.filter(Files::isRegularFile).toList()) {
                Path to = target.resolve(golden.relativize(file).toString());
                Files.createDirectories(to.getParent());
                Files.copy(file, to);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return target;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
