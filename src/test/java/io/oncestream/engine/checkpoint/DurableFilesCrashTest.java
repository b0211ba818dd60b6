package io.oncestream.engine.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.oncestream.engine.checkpoint.DurableFiles.WritePoint;

/**
 * {@link DurableFiles#failingAt} crashes a create-only write at each {@link WritePoint} and
 * leaves on disk what a process crash there leaves: a temp file with half or all of the
 * content, a final name whose temp name still exists, or the final file alone. On every one
 * of those states, the next start ({@link DurableFiles#removeTempFiles}) leaves either no file
 * or the complete one, never a partial final file.
 */
class DurableFilesCrashTest {

    private static final byte[] CONTENT = "v1\n{\"a\":1,\"b\":\"some text to cut in half\"}\n".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(WritePoint.class)
    void crashAtEachPointLeavesWhatAProcessCrashWouldAndTheNextStartCleansUp(WritePoint point) throws IOException {
        Path target = dir.resolve("7");
        DurableFiles crashing = DurableFiles.failingAt((reached, file) -> {
            if (reached == point) {
                throw new SimulatedCrash(reached + " of " + file);
            }
        });

        assertThatThrownBy(() -> crashing.createAtomically(target, CONTENT)).isInstanceOf(SimulatedCrash.class);

        List<Path> temps = temps();
        boolean linked = point.compareTo(WritePoint.LINKED) >= 0;
        boolean tempRemoved = point.compareTo(WritePoint.TEMP_REMOVED) >= 0;
        assertThat(Files.exists(target)).as("final name exists").isEqualTo(linked);
        assertThat(temps).as("temp files").hasSize(tempRemoved ? 0 : 1);
        if (!tempRemoved) {
            byte[] temp = Files.readAllBytes(temps.get(0));
            byte[] expected = point == WritePoint.TEMP_HALF_WRITTEN ? Arrays.copyOf(CONTENT, CONTENT.length / 2) : CONTENT;
            assertThat(temp).as("temp content").isEqualTo(expected);
        }
        if (linked) {
            assertThat(Files.readAllBytes(target)).isEqualTo(CONTENT);
        }

        DurableFiles.removeTempFiles(dir);
        assertThat(temps()).isEmpty();
        assertThat(DurableFiles.synced().createAtomically(target, CONTENT)).as("created on retry").isEqualTo(!linked);
        assertThat(Files.readAllBytes(target)).isEqualTo(CONTENT);
        assertThat(temps()).isEmpty();
    }

    @Test
    void probeSeesEveryPointInOrderAndAnExistingNameEndsTheWriteAfterTheTempFile() throws IOException {
        List<WritePoint> seen = new ArrayList<>();
        DurableFiles files = DurableFiles.failingAt((point, file) -> seen.add(point));
        Path target = dir.resolve("0");

        assertThat(files.createAtomically(target, CONTENT)).isTrue();
        assertThat(seen).containsExactly(WritePoint.values());

        seen.clear();
        assertThat(files.createAtomically(target, "other".getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(seen).containsExactly(WritePoint.TEMP_HALF_WRITTEN, WritePoint.TEMP_WRITTEN, WritePoint.TEMP_SYNCED);
        assertThat(Files.readAllBytes(target)).isEqualTo(CONTENT);
        assertThat(temps()).as("the refused write's temp file is removed").isEmpty();
    }

    @Test
    void anIoErrorFromTheProbeIsAnErrorOfTheLogThatNamesTheFile() {
        FileBatchLog<BatchCommit> log = new FileBatchLog<>(dir.resolve("commits"), BatchCommit.class,
                DurableFiles.failingAt((point, file) -> {
                    if (point == WritePoint.TEMP_SYNCED) {
                        throw new IOException("No space left on device");
                    }
                }));
        assertThatThrownBy(() -> log.add(3, new BatchCommit(0, 0, 0, 0, 0, java.util.Map.of(), 0)))
                .isInstanceOf(CheckpointException.class)
                .hasMessage(dir.resolve("commits").resolve("3") + ": cannot write: No space left on device");
    }

    /**
     * A write that fails (a full or read-only volume, an I/O error) rather than crashes, at each
     * point: the error names the file being created, whatever the system's error said (a failed
     * write or fsync names no file), and what is left is either nothing, temp file included, or
     * the complete file (from the link on), never a partial one a later start could read.
     */
    @ParameterizedTest
    @EnumSource(WritePoint.class)
    void aFailedWriteNamesTheFileAndLeavesNoPartialFile(WritePoint point) throws IOException {
        Path target = dir.resolve("7");
        DurableFiles full = DurableFiles.failingAt((reached, file) -> {
            if (reached == point) {
                throw new IOException("No space left on device");
            }
        });

        assertThatThrownBy(() -> full.createAtomically(target, CONTENT))
                .isInstanceOfSatisfying(java.nio.file.FileSystemException.class, e -> {
                    assertThat(e.getFile()).isEqualTo(target.toString());
                    assertThat(e.getReason()).isEqualTo("No space left on device");
                });

        assertThat(temps()).as("temp files").isEmpty();
        if (point.compareTo(WritePoint.LINKED) >= 0) {
            assertThat(Files.readAllBytes(target)).as("linked before the failure: complete").isEqualTo(CONTENT);
        } else {
            assertThat(Files.exists(target)).as("final name before the link").isFalse();
        }
    }

    /**
     * A new checkpoint on a full volume: opening it fails naming the metadata file it could not
     * write, leaves no metadata (nor temp file), and opens once the volume takes writes.
     */
    @Test
    void aCheckpointThatCannotWriteItsMetadataSaysWhichFileAndOpensLater() throws IOException {
        Path checkpoint = dir.resolve("checkpoint");
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, "shop/orders", List.of("orders"), 1, 0);
        DurableFiles full = DurableFiles.failingAt((reached, file) -> {
            if (reached == WritePoint.TEMP_HALF_WRITTEN) {
                throw new IOException("No space left on device");
            }
        });

        assertThatThrownBy(() -> Checkpoint.open(checkpoint, metadata, full))
                .isInstanceOf(CheckpointUnavailableException.class)
                .hasMessage(checkpoint + ": cannot open checkpoint: No space left on device (" + checkpoint.resolve("metadata") + ")");
        try (Stream<Path> left = Files.list(checkpoint)) {
            assertThat(left.map(f -> f.getFileName().toString())).as("left on the volume").containsExactly(".lock");
        }

        try (Checkpoint opened = Checkpoint.open(checkpoint, metadata, DurableFiles.synced())) {
            assertThat(Files.exists(checkpoint.resolve("metadata"))).isTrue();
        }
    }

    private List<Path> temps() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().contains(DurableFiles.TEMP_MARK)).toList();
        }
    }

    /** What a crash test throws to stop everything at a point, as a killed process would stop. */
    static final class SimulatedCrash extends RuntimeException {
        SimulatedCrash(String where) {
            super("simulated crash at " + where, null, false, false);
        }
    }
}
