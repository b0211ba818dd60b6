package io.oncestream.engine.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The checkpoints of a worker's volume, one per epoch of the job (docs/protocol.md §11): epoch
 * 0 at the volume's root, where checkpoints always were, epoch {@code e} in {@code epoch-<e>}.
 * A volume keeps the checkpoints of earlier epochs, each sealed; only the configured epoch's is
 * opened.
 */
public final class CheckpointEpochs {

    private static final String PREFIX = "epoch-";

    private CheckpointEpochs() {
    }

    /** Where epoch {@code epoch}'s checkpoint lives on {@code volume}. */
    public static Path directory(Path volume, int epoch) {
        return epoch == 0 ? volume : volume.resolve(PREFIX + epoch);
    }

    /** The epochs that have a checkpoint (its metadata) on {@code volume}, in order. */
    public static SortedSet<Integer> present(Path volume) {
        SortedSet<Integer> epochs = new TreeSet<>();
        if (Files.exists(volume.resolve("metadata"))) {
            epochs.add(0);
        }
        if (!Files.isDirectory(volume)) {
            return epochs;
        }
        try (Stream<Path> entries = Files.list(volume)) {
            entries.forEach(entry -> {
                String name = entry.getFileName().toString();
                if (name.matches(PREFIX + "[1-9][0-9]{0,8}") && Files.exists(entry.resolve("metadata"))) {
                    epochs.add(Integer.parseInt(name.substring(PREFIX.length())));
                }
            });
        } catch (IOException e) {
            throw new CheckpointUnavailableException(volume, "cannot list the checkpoint volume: " + Checkpoint.describe(e), e);
        }
        return epochs;
    }

    /**
     * The directory of epoch {@code epoch}, after checking that a worker configured for it may
     * open it: no later epoch's checkpoint is on the volume (the configuration would be stale),
     * and, for a checkpoint not yet started, every earlier one is sealed (otherwise batches it
     * committed after the savepoint would be lost).
     *
     * @throws CheckpointException naming the checkpoint that forbids it
     */
    public static Path check(Path volume, int epoch) {
        SortedSet<Integer> present = present(volume);
        if (!present.isEmpty() && present.last() > epoch) {
            throw new CheckpointException(directory(volume, present.last()), "is the checkpoint of epoch " + present.last()
                    + ", but this worker was configured for epoch " + epoch + ": its configuration is older than its"
                    + " checkpoint (a worker of an earlier rescale?)");
        }
        if (!present.contains(epoch)) {
            for (int earlier : present) {
                Path dir = directory(volume, earlier);
                if (Checkpoint.readSeal(dir).isEmpty()) {
                    throw new CheckpointException(dir.resolve(Checkpoint.SEALED), "missing: epoch " + earlier
                            + "'s checkpoint was not sealed at a barrier, so epoch " + epoch + "'s savepoint may not include"
                            + " its last batches; refusing to start epoch " + epoch + " on this volume");
                }
            }
        }
        return directory(volume, epoch);
    }
}
