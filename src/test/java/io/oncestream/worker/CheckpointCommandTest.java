package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.testing.GoldenCheckpoint;

/**
 * {@code checkpoint inspect} on the golden checkpoint (batch 0 committed, batch 1 open): what it
 * holds, the planner's decision, a damaged file named, and not a byte changed, even while a
 * worker holds the checkpoint's lock.
 */
class CheckpointCommandTest {

    @Test
    void describesTheBatchesAndTheReplayRecoveryWillRun(@TempDir Path tmp) throws IOException {
        Path dir = copyOfGolden(tmp);
        Result r = run("inspect", dir.toString());
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("job shop/paid-orders, topics [orders, payments], worker 1 of 2 (format 1)")
                .contains("batches 0..1 retained: 1 committed, 1 open")
                .contains("batch 0  committed")
                .contains("read 200, filtered out 50, written 140, dead-lettered 10 in 321 ms")
                .contains("batch 1  OPEN       80 records  orders-1 [120, 200), payments-0 [80, 80)")
                .endsWith("next: replay batch 1 with exactly the ranges of offsets/1 (orders-1 [120, 200), payments-0 [80, 80)), then continue\n");
    }

    @Test
    void jsonForScripts(@TempDir Path tmp) throws IOException {
        Path dir = copyOfGolden(tmp);
        Result r = run("inspect", "--json", dir.toString());
        assertThat(r.code).as(r.err).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out);
        assertThat(doc.at("/metadata/jobId").asText()).isEqualTo("shop/paid-orders");
        assertThat(doc.at("/openBatch").asLong()).isEqualTo(1);
        assertThat(doc.at("/next/action").asText()).isEqualTo("replay");
        assertThat(doc.at("/next/batchId").asLong()).isEqualTo(1);
        assertThat(doc.at("/batches/1/partitions/orders-1/timestampBase").asLong()).isEqualTo(1764700000123001L);
        assertThat(doc.at("/batches/0/commit/rowsWritten").asLong()).isEqualTo(140);

        Files.writeString(dir.resolve("commits/1"), Files.readString(dir.resolve("commits/0")));
        JsonNode committed = new ObjectMapper().readTree(run("inspect", "--json", dir.toString()).out);
        assertThat(committed.at("/next/action").asText()).isEqualTo("next");
        assertThat(committed.at("/next/description").asText()).contains("batch 2, each partition from the end of batch 1 "
                + "(orders-1 at 200, payments-0 at 80)");
        assertThat(committed.path("openBatch").isNull()).isTrue();
    }

    @Test
    void aDamagedFileIsNamedAndLogsThatDoNotBelongTogetherAreRefused(@TempDir Path tmp) throws IOException {
        Path dir = copyOfGolden(tmp);
        Files.writeString(dir.resolve("offsets/1"), "v1\n{\"partitions\": ");
        Result damaged = run("inspect", dir.toString());
        assertThat(damaged.code).isEqualTo(1);
        assertThat(damaged.err).startsWith("checkpoint inspect: " + dir.resolve("offsets/1") + ": not a valid BatchOffsets");
        JsonNode json = new ObjectMapper().readTree(run("inspect", "--json", dir.toString()).out);
        assertThat(json.at("/error/path").asText()).isEqualTo(dir.resolve("offsets/1").toString());

        Path gap = copyOfGolden(tmp.resolve("gap"));
        Files.writeString(gap.resolve("offsets/3"), Files.readString(gap.resolve("offsets/1")));
        Result refused = run("inspect", gap.toString());
        assertThat(refused.code).isEqualTo(1);
        assertThat(refused.out).contains("next: a worker refuses to start on this checkpoint: the offset log ends at batch 3 "
                + "but the commit log at batch 0");

        Result none = run("inspect", tmp.resolve("nothing").toString());
        assertThat(none.code).isEqualTo(1);
        assertThat(none.err).contains("nothing: no such directory");
        assertThat(run("inspect").code).isEqualTo(2);
        assertThat(run("inspect", "--frobnicate", dir.toString()).err).contains("usage: checkpoint inspect [--json] [--epoch N] DIRECTORY");
    }

    /** The appended golden checkpoint: read as the other; a crash's incomplete entry listed; a damaged segment named with the byte. */
    @Test
    void readsTheAppendedFormatListsAnIncompleteEntryAndNamesADamagedSegment(@TempDir Path tmp) throws IOException {
        Path dir = GoldenCheckpoint.copyAppendedTo(tmp.resolve("checkpoint"));
        Result r = run("inspect", dir.toString());
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("batches 0..1 retained: 1 committed, 1 open")
                .contains("batch 1  OPEN       80 records  orders-1 [120, 200), payments-0 [80, 80)")
                .doesNotContain("incomplete")
                .endsWith("next: replay batch 1 with exactly the ranges of offsets/1 (orders-1 [120, 200), payments-0 [80, 80)), then continue\n");

        Path commits = dir.resolve("commits/log-0");
        long size = Files.size(commits);
        Files.write(commits, new byte[] {0, 0, 0, 90, 1, 2}, java.nio.file.StandardOpenOption.APPEND);
        Result torn = run("inspect", dir.toString());
        assertThat(torn.code).as(torn.err).isZero();
        assertThat(torn.out).contains("incomplete last entries left by a crash (read as absent; a worker cuts each off when it"
                + " next appends to that log): [commits/log-0 at byte " + size + " (6 bytes)]")
                .endsWith("next: replay batch 1 with exactly the ranges of offsets/1 (orders-1 [120, 200), payments-0 [80, 80)), then continue\n");
        assertThat(new ObjectMapper().readTree(run("inspect", "--json", dir.toString()).out).at("/incompleteEntries/0").asText())
                .isEqualTo("commits/log-0 at byte " + size + " (6 bytes)");

        Path offsets = dir.resolve("offsets/log-0");
        byte[] bytes = Files.readAllBytes(offsets);
        bytes[16 + 5] ^= 0x55;
        Files.write(offsets, bytes);
        Result damaged = run("inspect", dir.toString());
        assertThat(damaged.code).isEqualTo(1);
        assertThat(damaged.err).startsWith("checkpoint inspect: " + offsets + ": damaged at byte 0 (a checksum that does not match)");
        assertThat(Files.readAllBytes(offsets)).as("nothing changed").isEqualTo(bytes);
    }

    @Test
    void aCommitAPowerLossTookBackIsShownAsTheWorkerWillRestoreIt(@TempDir Path tmp) throws IOException {
        Path dir = GoldenCheckpoint.copyRestoreTo(tmp.resolve("checkpoint"));
        byte[] commitsBefore = Files.readAllBytes(dir.resolve("commits/log-0"));
        Result r = run("inspect", dir.toString());
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("batches 0..2 retained: 2 committed, 1 open")
                .contains("batch 1  committed")
                .contains("batch 2  OPEN       45 records  orders-1 [200, 230), payments-0 [80, 95)")
                .endsWith("next: replay batch 2 with exactly the ranges of offsets/2 (orders-1 [200, 230), payments-0 [80, 95)),"
                        + " after restoring commits/1 from offsets/2 (a power loss took it back before it was durable), then continue\n");
        assertThat(Files.readAllBytes(dir.resolve("commits/log-0"))).as("nothing restored by inspecting").isEqualTo(commitsBefore);
    }

    @Test
    void readsWhileAWorkerHoldsTheLockAndChangesNothing(@TempDir Path tmp) throws IOException {
        Path dir = copyOfGolden(tmp);
        Files.writeString(dir.resolve("offsets/.2.tmp-left-by-a-crash"), "v1\n{");
        CheckpointMetadata metadata = new CheckpointMetadata(1, "shop/paid-orders", java.util.List.of("orders", "payments"), 2, 1);
        // The worker's open removes leftover temp files; make one again while it holds the lock.
        try (Checkpoint running = Checkpoint.open(dir, metadata, DurableFiles.synced())) {
            Files.writeString(dir.resolve("offsets/.2.tmp-left-by-a-crash"), "v1\n{");
            Map<String, String> before = snapshot(dir);
            Result r = run("inspect", dir.toString());
            assertThat(r.code).as(r.err).isZero();
            assertThat(r.out).contains("temp files left by a crash (a worker removes them when it starts): "
                    + "[offsets/.2.tmp-left-by-a-crash]");
            assertThat(snapshot(dir)).as("every file, its bytes and its modification time").isEqualTo(before);
        }
    }

    /** A rescaled worker's volume (the golden one of GoldenEpochsTest): the newest epoch by default, --epoch for another. */
    @Test
    void aRescaledVolumeShowsItsEpochsTheSavepointAndTheSeal(@TempDir Path tmp) throws Exception {
        Path volume = tmp.resolve("volume");
        Path golden = Path.of(CheckpointCommandTest.class.getResource("/checkpoint/golden-epochs").toURI());
        try (Stream<Path> files = Files.walk(golden)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.createDirectories(volume.resolve(golden.relativize(f).toString()).getParent());
                Files.copy(f, volume.resolve(golden.relativize(f).toString()));
            }
        }
        Result newest = run("inspect", volume.toString());
        assertThat(newest.code).as(newest.err).isZero();
        assertThat(newest.out).contains("worker 1 of 3").contains("epoch 1 (epochs on this volume: [0, 1]; --epoch N for another)")
                .contains("seeded from the savepoint of epoch 1 (2 -> 3 workers, after batches [4, 1])")
                .contains("next: replay batch 0 with exactly the ranges of offsets/0");
        Result sealed = run("inspect", "--epoch", "0", volume.toString());
        assertThat(sealed.code).as(sealed.err).isZero();
        assertThat(sealed.out).contains("worker 1 of 2")
                .contains("next: nothing: sealed at the barrier for epoch 1 after batch 1; its partitions went on from there in epoch 1");
        Result json = run("inspect", "--json", volume.toString());
        assertThat(json.out).contains("\"epoch\" : 1").contains("\"epochs\" : [ 0, 1 ]").contains("\"toParallelism\" : 3");
        assertThat(run("inspect", "--epoch", volume.toString()).code).isEqualTo(2);
    }

    private static Path copyOfGolden(Path tmp) {
        return GoldenCheckpoint.copyTo(tmp.resolve("checkpoint"));
    }

    private static Map<String, String> snapshot(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.toList()) {
                FileTime modified = Files.getLastModifiedTime(f);
                out.put(dir.relativize(f).toString(), (Files.isDirectory(f) ? "dir" : Files.readString(f)) + " @" + modified);
            }
        }
        return out;
    }

    private record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CheckpointCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
