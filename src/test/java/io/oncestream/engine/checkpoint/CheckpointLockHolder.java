package io.oncestream.engine.checkpoint;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A second process for {@link CheckpointLockAcrossProcessesTest}: opens the checkpoint in
 * {@code args[0]} and prints {@code HOLDING} while it holds it, until a line {@code close} (or
 * the end of its input) makes it close and print {@code CLOSED}; or prints {@code REFUSED}
 * and the error and exits with 3 if the checkpoint cannot be opened.
 */
public final class CheckpointLockHolder {

    static final CheckpointMetadata METADATA = new CheckpointMetadata(CheckpointMetadata.FORMAT, "test/lock",
            java.util.List.of("orders"), 1, 0);

    private CheckpointLockHolder() {
    }

    public static void main(String[] args) throws IOException {
        Checkpoint checkpoint;
        try {
            checkpoint = Checkpoint.open(Path.of(args[0]), METADATA, DurableFiles.synced());
        } catch (CheckpointException e) {
            System.out.println("REFUSED " + e.getMessage());
            System.out.flush();
            System.exit(3);
            return;
        }
        System.out.println("HOLDING " + checkpoint.directory());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        do {
            line = in.readLine();
        } while (line != null && !line.equals("close"));
        checkpoint.close();
        System.out.println("CLOSED");
        System.out.flush();
    }
}
