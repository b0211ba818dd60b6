package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

import io.oncestream.engine.checkpoint.DurableFiles;

/**
 * What one durable checkpoint entry costs on this disk, the way the engine writes it (a new
 * file: write, fsync, link, unlink the temp name, fsync the directory; twice per batch, for
 * {@code offsets/N} and {@code commits/N}) side by side with the ways a log could be written
 * instead: appended to one file with {@code fdatasync}, and written into space allocated
 * beforehand with {@code fdatasync} (no size change to record). Not the engine: a bound on what
 * a change of the checkpoint's format could take off each batch. {@code --durable-writes N}: N
 * entries of a batch's size per way and round, 5 rounds alternating, in a new directory under
 * {@code java.io.tmpdir} (the checkpoint's file system when it is set to that volume).
 */
final class DurableWriteBenchmark {

    private static final int ROUNDS = 5;
    /** About an {@code offsets/N} of a job with 4 partitions. */
    private static final int ENTRY_BYTES = 420;

    private DurableWriteBenchmark() {
    }

    static void alone(int entries) throws IOException {
        Path dir = Files.createTempDirectory("oncestream-durable-writes");
        byte[] entry = new byte[ENTRY_BYTES];
        Arrays.fill(entry, (byte) 'x');
        Map<String, long[]> micros = new LinkedHashMap<>();
        micros.put("new file per entry (the engine)", new long[entries * ROUNDS]);
        micros.put("append, fdatasync", new long[entries * ROUNDS]);
        micros.put("preallocated, fdatasync", new long[entries * ROUNDS]);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                Path files = Files.createDirectory(dir.resolve("files-" + round));
                DurableFiles durable = DurableFiles.synced();
                long[] perFile = micros.get("new file per entry (the engine)");
                for (int i = 0; i < entries; i++) {
                    long start = System.nanoTime();
                    durable.createAtomically(files.resolve(Long.toString(i)), entry);
                    perFile[round * entries + i] = (System.nanoTime() - start) / 1000;
                }
                append(dir.resolve("append-" + round), entry, entries, false, micros.get("append, fdatasync"), round * entries);
                append(dir.resolve("prealloc-" + round), entry, entries, true, micros.get("preallocated, fdatasync"),
                        round * entries);
                log("durable writes: round %d of %d done", round + 1, ROUNDS);
            }
        } finally {
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        long[] engine = micros.get("new file per entry (the engine)");
        Arrays.sort(engine);
        log("durable writes of %d-byte entries in %s, %d per way in each of %d rounds, alternating (µs: p50 / p99 / max;"
                + " ratio of p50 and p99 to the engine's way):", ENTRY_BYTES, dir.getParent(), entries, ROUNDS);
        micros.forEach((way, values) -> {
            Arrays.sort(values);
            double p50 = RecordLatencies.percentile(values, 0.50);
            double p99 = RecordLatencies.percentile(values, 0.99);
            log("  %-32s %,6.0f / %,6.0f / %,6d   %.2f / %.2f", way, p50, p99, values[values.length - 1],
                    p50 / RecordLatencies.percentile(engine, 0.50), p99 / RecordLatencies.percentile(engine, 0.99));
        });
    }

    /** {@code entries} framed appends to {@code file}, each made durable with {@code fdatasync}. */
    private static void append(Path file, byte[] entry, int entries, boolean preallocate, long[] into, int at) throws IOException {
        int frame = entry.length + 8;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            if (preallocate) {
                ByteBuffer zeros = ByteBuffer.allocate(64 * 1024);
                for (long written = 0; written < (long) frame * entries; ) {
                    zeros.clear();
                    written += channel.write(zeros);
                }
                channel.force(true);
                channel.position(0);
            }
            ByteBuffer buffer = ByteBuffer.allocate(frame);
            for (int i = 0; i < entries; i++) {
                buffer.clear();
                buffer.putInt(entry.length).putInt(i).put(entry).flip();
                long start = System.nanoTime();
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(false);
                into[at + i] = (System.nanoTime() - start) / 1000;
            }
        }
    }
}
