package io.oncestream.operator.status;

import java.util.List;

/**
 * A rescale as the status shows it (docs/protocol.md §11): the workers stopping at a barrier,
 * then the new workers starting from the savepoint, then done.
 *
 * @param stage       where it is
 * @param from        workers before
 * @param to          workers after
 * @param epoch       the epoch it starts
 * @param done        workers sealed (barrier), or workers reporting in the new epoch (starting)
 * @param lastBatches the savepoint's last batch of each old worker, once it is taken
 * @param detail      what it waits for, or null
 */
public record Rescale(Stage stage, int from, int to, int epoch, int done, List<Long> lastBatches, String detail) {

    /** The stages of a rescale. */
    public enum Stage { BARRIER, STARTING, COMPLETED }

    String message() {
        String shape = (from == to ? "new configuration for " + to + " workers" : from + " -> " + to + " workers") + ", epoch " + epoch;
        String text = switch (stage) {
            case BARRIER -> shape + ": stopping at a batch boundary (" + done + " of " + from + " workers sealed their checkpoints)";
            case STARTING -> shape + ": savepoint taken after batches " + lastBatches + "; " + done + " of " + to
                    + " workers running in epoch " + epoch;
            case COMPLETED -> (from == to ? "new configuration applied from a savepoint (" + to + " workers, "
                    : "rescaled from " + from + " to " + to + " workers (") + "epoch " + epoch + ", savepoint after batches "
                    + lastBatches + ")";
        };
        return detail == null ? text : text + "; " + detail;
    }
}
