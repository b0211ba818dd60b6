package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The committed golden checkpoint ({@code src/test/resources/checkpoint/golden}): job
 * {@code shop/paid-orders}, worker 1 of 2 on topics orders and payments, batch 0 committed and
 * batch 1 open. Tests work on copies; the originals are what the format must keep reading.
 */
public final class GoldenCheckpoint {

    /** Its files, relative to the checkpoint directory. */
    public static final List<String> FILES = List.of("metadata", "offsets/0", "offsets/1", "commits/0");

    private GoldenCheckpoint() {
    }

    /** The golden directory itself (read only). */
    public static Path directory() {
        try {
            return Path.of(GoldenCheckpoint.class.getResource("/checkpoint/golden").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A copy of every golden file in {@code target} (created), which it returns. */
    public static Path copyTo(Path target) {
        Path golden = directory();
        try (Stream<Path> all = Files.walk(golden)) {
            List<Path> files = all.filter(Files::isRegularFile).toList();
            if (files.size() != FILES.size()) {
                throw new IllegalStateException("the golden checkpoint has " + files.size() + " files, expected " + FILES);
            }
            for (String file : FILES) {
                Files.createDirectories(target.resolve(file).getParent());
                Files.copy(golden.resolve(file), target.resolve(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return target;
    }
}
