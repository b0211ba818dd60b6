package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The committed golden checkpoints: job {@code shop/paid-orders}, worker 1 of 2 on topics orders
 * and payments, batch 0 committed and batch 1 open, in each format a build wrote:
 * {@code src/test/resources/checkpoint/golden} as one file per batch (builds before the logs
 * were appended), {@code golden-appended} as segments of frames (the same entries' bytes).
 * Tests work on copies; the originals are what the format must keep reading.
 */
public final class GoldenCheckpoint {

    /** The files of the one-file-per-batch checkpoint, relative to the checkpoint directory. */
    public static final List<String> FILES = List.of("metadata", "offsets/0", "offsets/1", "commits/0");
    /** The files of the appended checkpoint. */
    public static final List<String> APPENDED_FILES = List.of("metadata", "offsets/log-0", "commits/log-0");

    private GoldenCheckpoint() {
    }

    /** The one-file-per-batch golden directory itself (read only). */
    public static Path directory() {
        return resource("/checkpoint/golden");
    }

    /** The appended golden directory itself (read only). */
    public static Path appendedDirectory() {
        return resource("/checkpoint/golden-appended");
    }

    /** A copy of every one-file-per-batch golden file in {@code target} (created), which it returns. */
    public static Path copyTo(Path target) {
        return copy(directory(), FILES, target);
    }

    /** A copy of every appended golden file in {@code target} (created), which it returns. */
    public static Path copyAppendedTo(Path target) {
        return copy(appendedDirectory(), APPENDED_FILES, target);
    }

    /**
     * A copy of {@code golden-restore} in {@code target} (created), which it returns: the appended
     * checkpoint after batch 1 was committed and batch 2 planned, its write-ahead entry carrying
     * the commit of batch 1, which a power loss then took back (the files as {@link #APPENDED_FILES}).
     */
    public static Path copyRestoreTo(Path target) {
        return copy(resource("/checkpoint/golden-restore"), APPENDED_FILES, target);
    }

    private static Path resource(String name) {
        try {
            return Path.of(GoldenCheckpoint.class.getResource(name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Path copy(Path golden, List<String> names, Path target) {
        try (Stream<Path> all = Files.walk(golden)) {
            List<Path> files = all.filter(Files::isRegularFile).toList();
            if (files.size() != names.size()) {
                throw new IllegalStateException(golden + " has " + files.size() + " files, expected " + names);
            }
            for (String file : names) {
                Files.createDirectories(target.resolve(file).getParent());
                Files.copy(golden.resolve(file), target.resolve(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return target;
    }
}
