package io.oncestream.api;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The access mode of the checkpoint volume claims. {@code ReadWriteOncePod} lets the cluster
 * itself refuse a second pod on a worker's volume (the successor of a force-deleted pod waits
 * until the old one is gone); it needs a CSI driver that supports it. The checkpoint's lock
 * file is the fence on every volume either way.
 */
public enum VolumeAccessMode {
    @JsonProperty("ReadWriteOnce")
    READ_WRITE_ONCE("ReadWriteOnce"),
    @JsonProperty("ReadWriteOncePod")
    READ_WRITE_ONCE_POD("ReadWriteOncePod");

    private final String kubernetesName;

    VolumeAccessMode(String kubernetesName) {
        this.kubernetesName = kubernetesName;
    }

    /** The name a PersistentVolumeClaim's {@code accessModes} uses. */
    public String kubernetesName() {
        return kubernetesName;
    }
}
