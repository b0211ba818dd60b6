package io.oncestream.operator.model;

import java.nio.file.Path;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.engine.checkpoint.Savepoint;

/**
 * A job's savepoints in the API server (docs/protocol.md §11): one immutable ConfigMap per
 * epoch, {@code <job>-savepoint-<epoch>}, owned by the job, written before anything is scaled.
 * It carries the job's labels but not the managed-by label, so the informers of the worker
 * objects do not see it; the operator reads it by name during a rescale. The worker
 * ConfigMap carries a copy under {@link #KEY}, which is how the workers get it.
 */
public final class Savepoints {

    /** The key of the savepoint in its ConfigMap and in the worker ConfigMap (the worker reads {@code savepoint.json}). */
    public static final String KEY = "savepoint.json";
    /** Label naming the epoch a savepoint ConfigMap starts. */
    public static final String EPOCH_LABEL = "oncestream.io/savepoint-epoch";

    private Savepoints() {
    }

    public static String name(String job, int epoch) {
        return job + "-savepoint-" + epoch;
    }

    public static ConfigMap desired(StreamJob job, Savepoint savepoint) {
        ConfigMap map = new ConfigMapBuilder()
                .withMetadata(OwnedObjects.metadata(job, name(job.getMetadata().getName(), savepoint.epoch())))
                .withImmutable(true)
                .addToData(KEY, savepoint.encode())
                .build();
        Map<String, String> labels = new java.util.TreeMap<>(map.getMetadata().getLabels());
        labels.remove("app.kubernetes.io/managed-by");
        labels.put(EPOCH_LABEL, Integer.toString(savepoint.epoch()));
        map.getMetadata().setLabels(labels);
        return map;
    }

    /** The savepoint in {@code map} (a savepoint ConfigMap or the worker ConfigMap), or null if it has none. */
    public static Savepoint of(ConfigMap map) {
        String text = map == null || map.getData() == null ? null : map.getData().get(KEY);
        if (text == null) {
            return null;
        }
        return Savepoint.decode(Path.of("configmap", map.getMetadata().getNamespace(), map.getMetadata().getName(), KEY), text);
    }
}
