package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/** What tests do to an {@link AppendBatchLog}'s segments on disk: find which batch an append is for, lose the last entry. */
public final class LogFiles {

    private LogFiles() {
    }

    /** The batch whose entry an append to {@code segment} starting at byte {@code start} writes. */
    public static long batchAt(Path segment, long start) {
        long first = Long.parseLong(segment.getFileName().toString().substring(AppendBatchLog.SEGMENT.length()));
        return first + framesBefore(segment, start).count;
    }

    /**
     * Cuts the last entry of the log in {@code logDir} off its last segment, as a power loss
     * before its {@code fdatasync} could; returns its batch id.
     */
    public static long dropLastEntry(Path logDir) {
        Path last;
        try (Stream<Path> list = Files.list(logDir)) {
            last = list.filter(p -> p.getFileName().toString().startsWith(AppendBatchLog.SEGMENT))
                    .max(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString()
                            .substring(AppendBatchLog.SEGMENT.length())))).orElseThrow();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (FileChannel channel = FileChannel.open(last, StandardOpenOption.WRITE)) {
            Frames frames = framesBefore(last, channel.size());
            channel.truncate(frames.lastStart);
            return batchAt(last, frames.lastStart);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record Frames(int count, long lastStart) {
    }

    private static Frames framesBefore(Path segment, long end) {
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
            ByteBuffer length = ByteBuffer.allocate(4);
            long at = 0;
            long lastStart = -1;
            int count = 0;
            while (at + AppendBatchLog.HEADER_BYTES <= end) {
                length.clear();
                channel.read(length, at);
                lastStart = at;
                at += AppendBatchLog.HEADER_BYTES + length.getInt(0);
                if (at > end) {
                    break;
                }
                count++;
            }
            return new Frames(count, lastStart);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
