package io.oncestream.operator.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import io.oncestream.engine.config.JobConfig;

/**
 * Which spec changes the checkpoints of a running job cannot follow. The checkpoint of each
 * worker records offsets of the partitions it was assigned (topics and parallelism) and the
 * commit log speaks for rows of one table: changing any of these under existing checkpoints
 * would either replay nothing or replay into the wrong place, so the change is refused and
 * the workers keep the configuration they run. Everything else (filter, columns, batch size,
 * trigger, resources, image...) rolls the workers and resumes from the checkpoint.
 */
public final class CheckpointCompatibility {

    private CheckpointCompatibility() {
    }

    /** Why {@code desired} cannot replace {@code applied} on existing checkpoints, or empty when it can. */
    public static Optional<String> refusal(JobConfig applied, JobConfig desired) {
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
        if (applied.parallelism() != desired.parallelism()) {
            changes.add("spec.parallelism changed from " + applied.parallelism() + " to " + desired.parallelism());
        }
        if (changes.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(String.join("; ", changes) + ": the job has checkpoints written for the previous value"
                + " (rescaling and re-targeting a checkpoint are not supported yet). The workers keep running the"
                + " previous configuration; revert the change, or delete the StreamJob and its checkpoint"
                + " PersistentVolumeClaims to start over.");
    }
}
