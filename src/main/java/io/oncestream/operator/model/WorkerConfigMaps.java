package io.oncestream.operator.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

/** The ConfigMap holding a job's worker configuration. */
public final class WorkerConfigMaps {

    private WorkerConfigMaps() {
    }

    public static ConfigMap desired(StreamJob job, JobConfig config) {
        return new ConfigMapBuilder()
                .withMetadata(OwnedObjects.metadata(job, StreamJobResources.configMapName(job.getMetadata().getName())))
                .addToData(StreamJobResources.CONFIG_KEY, JobConfigs.toJson(config))
                .build();
    }

    /** Hash of the configuration; in the pod template, so a change rolls the workers. */
    public static String hash(JobConfig config) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(JobConfigs.toJson(config).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
