package io.oncestream.contract;

/**
 * Every default of a job, in one place: the worker's parser ({@code engine.config.JobConfigs})
 * fills them into its configuration, also for the operator, whose mapping of a StreamJob leaves
 * out what the spec leaves out; and the CRD's {@code default:}s are these constants (a test checks
 * the generated CRD against them). Text forms are what a StreamJob or a configuration file says;
 * they are compile-time constants so that the CRD annotations can name them.
 */
public final class JobDefaults {

    public static final String STARTING_OFFSETS = "earliest";
    public static final int MAX_RECORDS_PER_BATCH = 50_000;
    public static final boolean FAIL_ON_DATA_LOSS = true;
    public static final String FORMAT = "json";
    public static final String TOMBSTONES = "ignore";
    public static final String CONSISTENCY = "LOCAL_QUORUM";
    public static final int MAX_IN_FLIGHT = 256;
    public static final int MAX_BATCH_ROWS = 32;
    /**
     * Cassandra partitions with the same replicas per unlogged batch: Cassandra's own
     * {@code unlogged_batch_across_partitions_warn_threshold} (10), so that no batch is logged
     * by the node as a warning.
     */
    public static final int MAX_BATCH_PARTITIONS = 10;
    /**
     * Bytes of values in an unlogged batch that spans Cassandra partitions: Cassandra's own
     * {@code batch_size_warn_threshold} (5 KiB), so that no batch is logged as a warning, and a
     * tenth of {@code batch_size_fail_threshold} (50 KiB), above which Cassandra refuses the batch.
     */
    public static final int MAX_BATCH_BYTES = 5 * 1024;
    public static final String DEAD_LETTER_MODE = "fail";
    /**
     * The longest raw key or value a dead letter keeps: a dead letter must be written whatever
     * the record's size, and 1 MiB fits any node's mutation limit with room to spare.
     */
    public static final int DEAD_LETTER_MAX_VALUE_BYTES = 1 << 20;
    /** The trigger interval as a StreamJob writes it; {@link #TRIGGER_INTERVAL_MS} as the worker does. */
    public static final String TRIGGER_INTERVAL = "1s";
    public static final long TRIGGER_INTERVAL_MS = Durations.millis(TRIGGER_INTERVAL);
    public static final boolean AVAILABLE_NOW = false;
    public static final int RETAIN_BATCHES = 100;
    public static final int PARALLELISM = 1;
    /**
     * After a permanent failure the job stays failed: such a failure (a bad record in fail mode,
     * a corrupt checkpoint, a refused write) comes back the same on every try, and a job that
     * says Failed is the one a person looks at.
     */
    public static final String RESTART_ON_FAILURE = "Never";
    /** The longest pause between two starts as a StreamJob writes it; {@link #RESTART_MAX_BACKOFF_MS} as the worker does. */
    public static final String RESTART_MAX_BACKOFF = "5m";
    public static final long RESTART_MAX_BACKOFF_MS = Durations.millis(RESTART_MAX_BACKOFF);

    private JobDefaults() {
    }

    /**
     * The consumer group whose offsets a job's workers commit for lag tools:
     * {@code oncestream-} and the job id with {@code /} as {@code .} ({@code oncestream-shop.paid-orders}).
     */
    public static String groupId(String jobId) {
        return "oncestream-" + jobId.replace('/', '.');
    }
}
