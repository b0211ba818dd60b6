package io.oncestream.operator.model;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

import io.oncestream.api.StreamJob;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;

/**
 * The checked worker configuration of each StreamJob, computed once per spec generation:
 * reconciles repeat every poll interval, and compiling a job's CEL each time would be work
 * done again for an unchanged spec.
 */
public final class CheckedSpecs {

    /** A spec's configuration, or why it is invalid (then config is null). */
    public record Checked(long generation, JobConfig config, String error) {
    }

    static final int PRUNE_EVERY = 256;

    private final Function<StreamJob, JobConfig> checker;
    private final Map<String, Checked> byUid = new ConcurrentHashMap<>();
    private final AtomicLong checks = new AtomicLong();

    public CheckedSpecs(Function<StreamJob, JobConfig> checker) {
        this.checker = checker;
    }

    /**
     * @param live uids of the jobs that exist, asked for now and then (every {@value #PRUNE_EVERY}
     *             checks) to forget deleted jobs
     */
    public Checked of(StreamJob job, Supplier<Set<String>> live) {
        String uid = job.getMetadata().getUid();
        long generation = job.getMetadata().getGeneration() == null ? 0 : job.getMetadata().getGeneration();
        Checked known = byUid.get(uid);
        if (known != null && known.generation() == generation) {
            return known;
        }
        Checked checked;
        try {
            checked = new Checked(generation, checker.apply(job), null);
        } catch (InvalidConfigException e) {
            checked = new Checked(generation, null, e.getMessage());
        }
        byUid.put(uid, checked);
        if (checks.incrementAndGet() % PRUNE_EVERY == 0) {
            byUid.keySet().retainAll(live.get());
        }
        return checked;
    }

    public int size() {
        return byUid.size();
    }
}
