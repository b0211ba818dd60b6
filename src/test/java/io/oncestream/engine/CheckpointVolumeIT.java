package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;

import io.oncestream.contract.TopicPartitionKey;
import io.oncestream.engine.checkpoint.AppendBatchLog;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.Command;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.WorkerProcess;

/**
 * A real worker process on a real, small checkpoint volume (a 4 MiB tmpfs the test mounts)
 * that runs full or read-only, while orders keep arriving: full or read-only when a worker
 * starts (a new checkpoint, an existing one), filling under a running worker, and filling
 * while a batch's rows are written but not yet committed. The worker neither reads nor writes
 * a batch it cannot record, says why on {@code /progress} (the file and the system's words),
 * and goes on by itself, in the same process, once the volume takes writes again. The table
 * ends equal to the independently computed rows and the consumer group is never ahead of the
 * table. And an ext4 volume the kernel turns read-only under a running worker, which only a
 * new mount cures. Timings are printed ({@code [volume]}), never asserted.
 */
@ExtendWith({KafkaExtension.class, CassandraExtension.class})
class CheckpointVolumeIT {

    private static final String NAME = "checkpoint-volume";
    private static final Path BASE = Path.of("target", "checkpoint-volume-it").toAbsolutePath();
    private static final List<Path> MOUNTED = new ArrayList<>();

    @AfterAll
    static void unmount() {
        for (Path mount : MOUNTED) {
            // rw first, so that nothing the test left read-only keeps the unmount from cleaning up.
            sh("mount", "-o", "remount,rw", mount.toString());
            Output r = sh("umount", mount.toString());
            if (r.exitCode() != 0) {
                sh("umount", "-l", mount.toString());
            }
        }
        MOUNTED.clear();
    }

    @Test
    void aFullOrReadOnlyVolumeStopsBatchesUntilItTakesWritesAgain(KafkaBroker kafka, CassandraNode cassandra) throws Exception {
        Path dir = BASE.resolve(Long.toString(System.currentTimeMillis()));
        Files.createDirectories(dir);
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, NAME, 3, 21,
                json -> json.replace("\"trigger\": {\"intervalMs\": 200}",
                        "\"trigger\": {\"intervalMs\": 500}, \"checkpoint\": {\"retainBatches\": 100000}"));
        Files.createDirectories(job.checkpoint);
        Output mounted = sh("mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", job.checkpoint.toString());
        assertThat(mounted.exitCode()).as("mounting a tmpfs for the checkpoint (the test runs as root): " + mounted.text())
                .isZero();
        MOUNTED.add(job.checkpoint);
        Path filler = job.checkpoint.resolve("filler");
        String group = "oncestream-it." + NAME;

        try (SteadyOrders orders = new SteadyOrders(kafka, job)) {
            // 1. A new checkpoint on a volume that is full from the start: not even its metadata fits.
            fill(filler);
            WorkerProcess worker = job.startWorker(Map.of());
            try {
                long since = System.nanoTime();
                awaitReported(worker, "No space left on device", job.checkpoint, "started on a full volume", since);
                holdAndCheckNothingLands(worker, job, group, "a new checkpoint on a full volume");
                assertThat(job.rows()).as("no batch ran").isEmpty();
                freeAndAwaitNextCommit(worker, job, filler, "full at start, new checkpoint");

                // 2. The volume fills up under a running worker.
                long lastBefore = awaitCommitsGrowing(worker, job);
                long filled = System.nanoTime();
                fill(filler);
                awaitReported(worker, "No space left on device", job.checkpoint, "filled while running (after batch " + lastBefore
                        + ")", filled);
                topUp(filler); // a page a failed write freed goes to the filler, not to the next batch
                holdAndCheckNothingLands(worker, job, group, "a volume filled under a running worker");
                freeAndAwaitNextCommit(worker, job, filler, "filled while running");

                // 3. Read-only. The kernel refuses to remount a file system read-only while a file
                // on it is open for writing, and a running worker holds its lock file so.
                awaitCommitsGrowing(worker, job);
                Output refused = sh("mount", "-o", "remount,ro", job.checkpoint.toString());
                System.out.println("[volume] remount read-only under a running worker: exit " + refused.exitCode() + ": "
                        + refused.text().strip());
                assertThat(refused.exitCode()).as("remount,ro while the worker holds .lock open for writing").isNotZero();
                assertThat(refused.text()).contains("busy");
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }
            Output ro = sh("mount", "-o", "remount,ro", job.checkpoint.toString());
            assertThat(ro.exitCode()).as("remount,ro with no worker: " + ro.text()).isZero();
            worker = job.startWorker(Map.of());
            try {
                long since = System.nanoTime();
                JsonNode waiting = awaitReported(worker, "Read-only file system", job.checkpoint, "started on a read-only volume",
                        since);
                assertThat(waiting.path("batchId").asLong()).as("what the checkpoint holds, read while it cannot be written")
                        .isEqualTo(new CheckpointOnDisk(job.checkpoint).latest("commits").orElseThrow());
                holdAndCheckNothingLands(worker, job, group, "a read-only volume");
                long freed = System.nanoTime();
                Output rw = sh("mount", "-o", "remount,rw", job.checkpoint.toString());
                assertThat(rw.exitCode()).as("remount,rw: " + rw.text()).isZero();
                awaitNextCommit(worker, job, freed, "read-only at start");

                // 4. A worker started again on an existing checkpoint whose volume is full.
                awaitCommitsGrowing(worker, job);
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }
            fill(filler);
            worker = job.startWorker(Map.of());
            try {
                long since = System.nanoTime();
                awaitReported(worker, "No space left on device", job.checkpoint, "started again on a full volume", since);
                holdAndCheckNothingLands(worker, job, group, "an existing checkpoint on a full volume");
                freeAndAwaitNextCommit(worker, job, filler, "full at a restart");
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }

            // 5. The volume fills while a batch is written: every row acknowledged, only its commit
            // missing. A segment per entry, so that the commit needs a new page: appended to a
            // segment whose last page has room, it would still fit on a full volume.
            long held = new CheckpointOnDisk(job.checkpoint).latest("commits").orElseThrow() + 2;
            Path release = dir.resolve("release-" + held);
            worker = job.startWorker(Map.of("ONCESTREAM_TEST_HOLD_AT", ProtocolStep.AFTER_SINK + ":" + held,
                    "ONCESTREAM_TEST_RELEASE_FILE", release.toString(), "ONCESTREAM_TEST_SEGMENT_ENTRIES", "1"));
            try {
                worker.awaitOutput("ONCESTREAM-TEST-HELD AFTER_SINK " + held, Duration.ofMinutes(2));
                fill(filler);
                long filled = System.nanoTime();
                Files.createFile(release);
                JsonNode waiting = awaitReported(worker, "No space left on device",
                        job.checkpoint.resolve("commits").resolve(AppendBatchLog.SEGMENT + held),
                        "filled after batch " + held + "'s rows were acknowledged", filled);
                assertThat(waiting.path("runningBatchId").asLong()).as("the batch waiting for its commit").isEqualTo(held);
                topUp(filler);
                holdAndCheckNothingLands(worker, job, group, "a batch waiting for its commit");
                freeAndAwaitNextCommit(worker, job, filler, "commit of a written batch");
                String log = worker.log();
                assertThat(log).contains("batch " + held + " is written but cannot be committed yet")
                        .doesNotContain("replaying open batch " + held);

                // The end: everything produced is committed, once.
                orders.stop();
                long produced = orders.count();
                EngineOutageIT.awaitCaughtUp(worker, produced);
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }
        }

        CheckpointOnDisk disk = new CheckpointOnDisk(job.checkpoint);
        assertThat(disk.tempFiles()).as("temp files left on the volume").isEmpty();
        assertEndsExact(kafka, job, group, disk);
    }

    /**
     * A volume the kernel turns read-only under a running worker, as ext4 does on an error with
     * {@code errors=remount-ro} (here {@code mount -o remount,abort}, ext4's way to simulate one):
     * what was not fsync'd is lost as in a power loss, and the mount cannot be made writable
     * again. The worker waits and says so; stopped, the file system repaired and mounted again,
     * a new worker goes on from what its logs kept: the table exact, the group at the end.
     */
    @Test
    void aVolumeTheKernelTurnsReadOnlyIsWaitedOutAndANewMountGoesOnExactly(KafkaBroker kafka, CassandraNode cassandra)
            throws Exception {
        Path dir = BASE.resolve(Long.toString(System.currentTimeMillis()));
        Files.createDirectories(dir);
        String name = NAME + "-ext4";
        EngineFixture job = new EngineFixture(kafka, cassandra, dir, name, 3, 22,
                json -> json.replace("\"trigger\": {\"intervalMs\": 200}", "\"trigger\": {\"intervalMs\": 500}"));
        Path image = dir.resolve("volume.ext4");
        assertThat(sh("truncate", "-s", "16M", image.toString()).exitCode()).isZero();
        Output made = sh("mkfs.ext4", "-q", "-F", image.toString());
        assertThat(made.exitCode()).as("mkfs.ext4: " + made.text()).isZero();
        Files.createDirectories(job.checkpoint);
        mountExt4(image, job.checkpoint);
        String group = "oncestream-it." + name;

        try (SteadyOrders orders = new SteadyOrders(kafka, job)) {
            WorkerProcess worker = job.startWorker(Map.of());
            try {
                awaitCommitsGrowing(worker, job);
                long lastBefore = awaitCommitsGrowing(worker, job);
                long aborted = System.nanoTime();
                Output abort = sh("mount", "-o", "remount,abort", job.checkpoint.toString());
                assertThat(abort.exitCode()).as("remount,abort: " + abort.text()).isZero();
                awaitReported(worker, "Read-only file system", job.checkpoint,
                        "ext4 turned read-only under a running worker (after batch " + lastBefore + ")", aborted);
                holdAndCheckNothingLands(worker, job, group, "a volume the kernel turned read-only");
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }
            Output unmounted = sh("umount", job.checkpoint.toString());
            assertThat(unmounted.exitCode()).as("umount: " + unmounted.text()).isZero();
            MOUNTED.remove(job.checkpoint);
            Output fsck = sh("e2fsck", "-fy", image.toString());
            System.out.println("[volume] e2fsck exit " + fsck.exitCode() + ":\n" + fsck.text().strip());
            assertThat(fsck.exitCode()).as("e2fsck: 0 clean, 1 errors corrected\n" + fsck.text()).isBetween(0, 1);
            mountExt4(image, job.checkpoint);

            worker = job.startWorker(Map.of());
            try {
                long mountedAgain = System.nanoTime();
                awaitNextCommit(worker, job, mountedAgain, "mounted again after the kernel's read-only");
                orders.stop();
                EngineOutageIT.awaitCaughtUp(worker, orders.count());
                assertThat(worker.terminate(Duration.ofSeconds(30))).as("exit code after SIGTERM").isEqualTo(143);
            } finally {
                worker.close();
            }
        }

        CheckpointOnDisk disk = new CheckpointOnDisk(job.checkpoint);
        assertEndsExact(kafka, job, group, disk);
    }

    private static void mountExt4(Path image, Path at) {
        Output mounted = sh("mount", "-o", "loop,errors=remount-ro", image.toString(), at.toString());
        assertThat(mounted.exitCode()).as("mounting an ext4 image for the checkpoint (the test runs as root): " + mounted.text())
                .isZero();
        MOUNTED.add(at);
    }

    /** Waits for {@code WAITING_FOR_CHECKPOINT} with {@code cause} in {@code lastError}; returns that progress. */
    /** Every batch committed, the table and dead letters exact, the group at the end of every partition. */
    private static void assertEndsExact(KafkaBroker kafka, EngineFixture job, String group, CheckpointOnDisk disk) {
        assertThat(disk.latest("commits")).as("every batch committed").isEqualTo(disk.latest("offsets"));
        assertThat(job.rows()).as("the table").isEqualTo(job.orders.expectedRows());
        assertThat(job.deadLetters()).isEmpty();
        Map<TopicPartition, Long> ends = EngineCrashIT.endOffsets(kafka, job.topic);
        Map<TopicPartition, OffsetAndMetadata> groupAtEnd = groupOffsets(job, group);
        ends.forEach((tp, end) -> assertThat(groupAtEnd.get(tp).offset()).as("group offset of " + tp).isEqualTo(end));
    }

    /**
     * Waits until the worker reports the wait for its volume with {@code reason} and prints how
     * long after {@code sinceNanos} it did; its error must name {@code named}.
     */
    private static JsonNode awaitReported(WorkerProcess worker, String reason, Path named, String what, long sinceNanos)
            throws IOException, InterruptedException {
        JsonNode waiting = awaitWaiting(worker, reason);
        System.out.println("[volume] " + what + ": reported after " + ms(sinceNanos) + " ms: " + waiting.path("state").asText()
                + ": " + waiting.path("lastError").asText());
        assertThat(waiting.path("lastError").asText()).contains(named.toString());
        return waiting;
    }

    private static JsonNode awaitWaiting(WorkerProcess worker, String cause) throws IOException, InterruptedException {
        AtomicReference<JsonNode> seen = new AtomicReference<>();
        Awaits.until(Duration.ofMinutes(2), "WAITING_FOR_CHECKPOINT with '" + cause + "' in /progress", () -> {
            JsonNode p = worker.progress();
            seen.set(p);
            return p != null && p.path("state").asText().equals("WAITING_FOR_CHECKPOINT")
                    && p.path("lastError").asText().contains(cause);
        });
        assertThat(worker.get("/healthz/ready").statusCode()).as("ready while the volume takes no writes").isEqualTo(503);
        return seen.get();
    }

    /**
     * For a while (the worker retries every 5 s at most, so a few of its tries), checks that no
     * batch lands: no commit, no new write-ahead entry, the table exactly the rows of the batches
     * the logs hold (an open batch's rows may be written, its commit missing), the consumer group
     * unchanged and never ahead of the last commit, and the worker still waiting.
     */
    private static void holdAndCheckNothingLands(WorkerProcess worker, EngineFixture job, String group, String what)
            throws InterruptedException {
        CheckpointOnDisk disk = new CheckpointOnDisk(job.checkpoint);
        List<Long> offsets = disk.batchIds("offsets");
        List<Long> commits = disk.batchIds("commits");
        Map<TopicPartition, OffsetAndMetadata> groupBefore = groupOffsets(job, group);
        System.out.println("[volume] " + what + ": holding with offsets " + tail(offsets) + ", commits " + tail(commits));
        for (int i = 0; i < 4; i++) {
            Thread.sleep(3000); // an observation window, not a synchronization: the state must stay as it is
            assertThat(disk.batchIds("offsets")).as(what + ": write-ahead entries").isEqualTo(offsets);
            assertThat(disk.batchIds("commits")).as(what + ": commits").isEqualTo(commits);
            JsonNode p = worker.progress();
            assertThat(p.path("state").asText()).as(what + ": state").isEqualTo("WAITING_FOR_CHECKPOINT");
            Map<TopicPartition, OffsetAndMetadata> groupNow = groupOffsets(job, group);
            assertThat(groupNow).as(what + ": consumer group").isEqualTo(groupBefore);
            assertGroupNotAheadOfCommits(job, groupNow, disk);
            Map<Integer, Long> ends = offsets.isEmpty() ? Map.of() : ends(disk.offsets(offsets.get(offsets.size() - 1)));
            Map<String, String> expected;
            synchronized (job.orders) {
                expected = job.orders.expectedRowsBefore(ends);
            }
            assertThat(job.rows()).as(what + ": the table holds the rows of the logged batches only").isEqualTo(expected);
        }
    }

    /** The group's offsets of this job's topic (the group, named after the job, also holds earlier runs' topics). */
    private static Map<TopicPartition, OffsetAndMetadata> groupOffsets(EngineFixture job, String group) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>(EngineCrashIT.groupOffsets(job.kafka, group));
        offsets.keySet().removeIf(tp -> !tp.topic().equals(job.topic));
        return offsets;
    }

    private static void assertGroupNotAheadOfCommits(EngineFixture job, Map<TopicPartition, OffsetAndMetadata> group,
            CheckpointOnDisk disk) {
        Map<Integer, Long> committed = disk.latest("commits").map(id -> ends(disk.offsets(id))).orElse(Map.of());
        group.forEach((tp, o) -> assertThat(o.offset()).as("group offset of " + tp + " against the last commit")
                .isLessThanOrEqualTo(committed.getOrDefault(tp.partition(), 0L)));
    }

    private static Map<Integer, Long> ends(io.oncestream.engine.checkpoint.BatchOffsets offsets) {
        Map<Integer, Long> ends = new TreeMap<>();
        offsets.partitions().forEach((p, r) -> ends.put(TopicPartitionKey.parse(p).partition(), r.end()));
        return ends;
    }

    private static void freeAndAwaitNextCommit(WorkerProcess worker, EngineFixture job, Path filler, String what)
            throws IOException {
        long freed = System.nanoTime();
        Files.delete(filler);
        awaitNextCommit(worker, job, freed, what);
    }

    /** Waits for a commit after the volume took writes again, and that the worker reports it, without a restart. */
    private static void awaitNextCommit(WorkerProcess worker, EngineFixture job, long freedAt, String what) {
        CheckpointOnDisk disk = new CheckpointOnDisk(job.checkpoint);
        long before = disk.latest("commits").orElse(-1L);
        long pid = worker.pid();
        Awaits.until(Duration.ofMinutes(2), "a commit after batch " + before + " (" + what + ")",
                () -> disk.latest("commits").orElse(-1L) > before);
        long committedAfter = ms(freedAt);
        Awaits.until(Duration.ofMinutes(1), "the worker reporting a batch after " + before, () -> {
            JsonNode p = worker.progress();
            return p != null && p.path("batchId").asLong() > before && !p.path("state").asText().startsWith("WAITING");
        });
        System.out.println("[volume] " + what + ": space back -> next commit (batch " + disk.latest("commits").orElseThrow()
                + ") after " + committedAfter + " ms");
        assertThat(worker.progress().path("lastError").asText()).as("the volume's error, once it passed")
                .doesNotContain("No space left on device").doesNotContain("Read-only file system");
        assertThat(worker.isAlive()).as("the same process goes on").isTrue();
        assertThat(worker.pid()).isEqualTo(pid);
    }

    /** Waits until a new batch commits (orders keep arriving), and returns the last committed batch. */
    private static long awaitCommitsGrowing(WorkerProcess worker, EngineFixture job) {
        CheckpointOnDisk disk = new CheckpointOnDisk(job.checkpoint);
        long before = disk.latest("commits").orElse(-1L);
        Awaits.until(Duration.ofMinutes(1), "a commit after batch " + before, () -> disk.latest("commits").orElse(-1L) > before);
        return disk.latest("commits").orElseThrow();
    }

    /** Appends to {@code filler} until the volume is full ("No space left on device"). */
    private static void fill(Path filler) throws IOException {
        try (FileChannel channel = FileChannel.open(filler, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ByteBuffer block = ByteBuffer.allocate(64 * 1024);
            while (true) {
                block.clear();
                try {
                    while (block.hasRemaining()) {
                        channel.write(block);
                    }
                } catch (IOException e) {
                    if (String.valueOf(e.getMessage()).contains("No space left on device")) {
                        return;
                    }
                    throw e;
                }
            }
        }
    }

    private static void topUp(Path filler) throws IOException {
        fill(filler);
    }

    private static String tail(List<Long> ids) {
        return ids.isEmpty() ? "none" : ids.size() + " up to " + ids.get(ids.size() - 1);
    }

    private static long ms(long sinceNanos) {
        return (System.nanoTime() - sinceNanos) / 1_000_000;
    }

    /** Runs {@code command}; its stdout and stderr together are {@link Output#text()}. */
    private static Output sh(String... command) {
        Command.Result r = Command.of(command).run(Duration.ofSeconds(30));
        return new Output(r.exitCode(), r.stdout() + r.stderr());
    }

    private record Output(int exitCode, String text) {
    }

    /** Orders produced all through the test, 60 every 300 ms, until stopped. */
    private static final class SteadyOrders implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;
        private final EngineFixture job;

        SteadyOrders(KafkaBroker kafka, EngineFixture job) {
            this.job = job;
            this.thread = new Thread(() -> {
                while (running.get()) {
                    try {
                        synchronized (job.orders) {
                            job.orders.produce(kafka, job.topic, 60, 0);
                        }
                        Thread.sleep(300); // the producer's pace, not a synchronization
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        failure.set(e);
                        return;
                    }
                }
            }, "steady-orders");
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(60_000);
            if (failure.get() != null) {
                throw new AssertionError("producing orders failed", failure.get());
            }
        }

        long count() {
            synchronized (job.orders) {
                return job.orders.produced().size();
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }

    static {
        try {
            Files.createDirectories(BASE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
