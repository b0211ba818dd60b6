package io.oncestream.operator.status;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.oncestream.api.StreamJobStatus;

/** Whether a projected status differs from the stored one: only then is it patched. */
public final class StatusChanges {

    private static final ObjectMapper JSON = new ObjectMapper();

    private StatusChanges() {
    }

    public static boolean differ(StreamJobStatus stored, StreamJobStatus projected) {
        if (stored == null || projected == null) {
            return stored != projected;
        }
        return !JSON.valueToTree(stored).equals(JSON.valueToTree(projected));
    }

    /** A deep copy. */
    static StreamJobStatus copy(StreamJobStatus status) {
        return JSON.convertValue(JSON.valueToTree(status), StreamJobStatus.class);
    }
}
