package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import io.oncestream.engine.config.JobConfig;

/**
 * Which spec changes the checkpoints of a running job cannot follow. The checkpoint of each
 * worker records offsets of the topics it reads, and the commit log speaks for rows of one
 * table: changing either under existing checkpoints would replay nothing or replay into the
 * wrong place, so the change is refused and the workers keep the configuration they run. A
 * change of parallelism is a rescale (docs/protocol.md §11), refused only where it cannot run:
 * with the job suspended, or in the same edit as such a change. Everything else (filter,
 * columns, batch size, trigger, resources, image...) rolls the workers and resumes from the
 * checkpoint.
 */
public final class CheckpointCompatibility {

    private CheckpointCompatibility() {
    }

    /** Why {@code desired} cannot replace {@code applied} on existing checkpoints, or empty when it can. */
    public static Optional<String> refusal(JobConfig applied, JobConfig desired) {
        return refusal(applied, desired, false);
    }

    /**
     * As above; a change of parallelism is a rescale, which needs the workers running (they stop
     * at a barrier and hand their partitions over), so it is refused while {@code suspended} and
     * together with a change of topics or table.
     */
    public static Optional<String> refusal(JobConfig applied, JobConfig desired, boolean suspended) {
        List<String> changes = new ArrayList<>();
        if (!new TreeSet<>(applied.source().topics()).equals(new TreeSet<>(desired.source().topics()))) {
            changes.add("spec.source.kafka.topics changed from " + new TreeSet<>(applied.source().topics()) + " to "
                    + new TreeSet<>(desired.source().topics()));
        }
        String appliedTable = applied.sink().keyspace() + "." + applied.sink().table();
        String desiredTable = desired.sink().keyspace() + "." + desired.sink().table();
        if (!appliedTable.equals(desiredTable)) {
            changes.add("spec.sink.cassandra keyspace.table changed from " + appliedTable + " to " + desiredTable);
        }
        boolean rescale = applied.parallelism() != desired.parallelism();
        if (rescale && changes.isEmpty() && suspended) {
            return Optional.of("spec.parallelism changed from " + applied.parallelism() + " to " + desired.parallelism()
                    + " while spec.suspend is true: a rescale hands the partitions over from running workers at a batch"
                    + " boundary. Resume the job to rescale it (or revert the change); nothing was changed: the job keeps its "
                    + applied.parallelism() + " workers and their checkpoints.");
        }
        if (changes.isEmpty()) {
            return Optional.empty();
        }
        if (rescale) {
            changes.add("spec.parallelism changed from " + applied.parallelism() + " to " + desired.parallelism()
                    + " in the same edit (rescale separately)");
        }
        return Optional.of(String.join("; ", changes) + ": the job has checkpoints written for the previous value"
                + " (re-targeting a checkpoint is not supported). The workers keep running the"
                + " previous configuration; revert the change, or delete the StreamJob and its checkpoint"
                + " PersistentVolumeClaims to start over.");
    }
}
