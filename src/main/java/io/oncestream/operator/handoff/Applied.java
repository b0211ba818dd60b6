package io.oncestream.operator.handoff;

import java.util.Optional;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.operator.model.Savepoints;

/** The configuration the workers run (from the applied ConfigMap) and the savepoint of their epoch; nulls if none. */
public record Applied(JobConfig config, Savepoint savepoint) {

    /** Nothing applied yet, or an applied ConfigMap that does not parse. */
    public static final Applied NONE = new Applied(null, null);

    private static final Logger LOG = Logger.getLogger(Applied.class);

    /** The workers' epoch: that of their savepoint, 0 before the first hand-off. */
    public int epoch() {
        return savepoint == null ? 0 : savepoint.epoch();
    }

    /** What the job's applied ConfigMap holds; {@link #NONE} if there is none, or if it does not parse (it will be replaced). */
    public static Applied of(StreamJob job, Optional<ConfigMap> applied) {
        if (applied.isEmpty() || applied.get().getData() == null
                || applied.get().getData().get(StreamJobResources.CONFIG_KEY) == null) {
            return NONE;
        }
        try {
            return new Applied(JobConfigs.parse(applied.get().getData().get(StreamJobResources.CONFIG_KEY)),
                    Savepoints.of(applied.get()));
        } catch (RuntimeException e) {
            LOG.warnf("%s/%s: the applied ConfigMap does not parse (%s); it will be replaced",
                    job.getMetadata().getNamespace(), job.getMetadata().getName(), e.getMessage());
            return NONE;
        }
    }
}
