package io.oncestream.contract;

/**
 * Counts of a checkpoint since its job started: what its batches read, filtered out, wrote and
 * dead-lettered, carried from commit to commit, through a barrier's seal ({@link CheckpointSeal})
 * and the savepoint to the next epoch, so a restarted worker reports the job's figures and not
 * its process's.
 */
public record RecordTotals(long read, long filteredOut, long written, long deadLettered) {

    public static final RecordTotals ZERO = new RecordTotals(0, 0, 0, 0);

    public RecordTotals plus(RecordTotals other) {
        return other == null ? this : new RecordTotals(read + other.read, filteredOut + other.filteredOut,
                written + other.written, deadLettered + other.deadLettered);
    }
}
