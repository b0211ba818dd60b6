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
