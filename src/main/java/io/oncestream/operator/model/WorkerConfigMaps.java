package io.oncestream.operator.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

/** The ConfigMap holding a job's worker configuration. */
public final class WorkerConfigMaps {

    private WorkerConfigMaps() {
    }

    public static ConfigMap desired(StreamJob job, JobConfig config) {
        return desired(job, config, null);
    }

    /**
     * @param savepoint the savepoint the workers' epoch starts from (under {@link Savepoints#KEY}),
     *                  or null for the job's first epoch
     */
    public static ConfigMap desired(StreamJob job, JobConfig config, Savepoint savepoint) {
        ConfigMapBuilder map = new ConfigMapBuilder()
                .withMetadata(OwnedObjects.metadata(job, StreamJobResources.configMapName(job.getMetadata().getName())))
                .addToData(StreamJobResources.CONFIG_KEY, JobConfigs.toJson(config));
        if (savepoint != null) {
            map.addToData(Savepoints.KEY, savepoint.encode());
        }
        return map.build();
    }

    /** Hash of the configuration; in the pod template, so a change rolls the workers. */
    public static String hash(JobConfig config) {
        return hash(config, null);
    }

    /** Hash of the configuration and the savepoint of its epoch; a new epoch rolls the workers too. */
    public static String hash(JobConfig config, Savepoint savepoint) {
        try {
            String text = JobConfigs.toJson(config) + (savepoint == null ? "" : "\n" + savepoint.encode());
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
