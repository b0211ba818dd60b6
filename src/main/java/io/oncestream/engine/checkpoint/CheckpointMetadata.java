package io.oncestream.engine.checkpoint;

import java.util.List;

/**
 * {@code metadata}: which job and which share of its partitions a checkpoint belongs to.
 * A worker that finds different values refuses to start rather than guess.
 *
 * @param format      checkpoint layout version
 * @param jobId       the job's identity
 * @param topics      the job's topics, sorted
 * @param parallelism number of workers of the job
 * @param workerIndex this worker's index (its pod ordinal)
 */
public record CheckpointMetadata(int format, String jobId, List<String> topics, int parallelism, int workerIndex) {

    public static final int FORMAT = 1;

    public CheckpointMetadata {
        topics = List.copyOf(topics.stream().sorted().toList());
    }
}
