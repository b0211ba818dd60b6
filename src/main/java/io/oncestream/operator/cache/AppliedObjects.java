package io.oncestream.operator.cache;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;

import io.oncestream.api.StreamJobResources;

/**
 * Whether an owned object (ConfigMap, Service, StatefulSet) is as the operator would apply it,
 * without keeping the whole object in memory: the desired object carries a digest of its own
 * content ({@link StreamJobResources#APPLIED_HASH_ANNOTATION}), and the cache keeps of the
 * actual object only its metadata and the fields a person is likely to change by hand
 * (ConfigMap data, StatefulSet replicas). The object is applied again when the digests differ
 * (the job or the operator changed) or a kept field differs (a hand edit, undone).
 */
public final class AppliedObjects {

    private AppliedObjects() {
    }

    /** {@code desired} with the digest of its content (computed before the digest is added) in its annotations. */
    public static <R extends HasMetadata> R stamped(R desired) {
        String digest = digest(Serialization.asJson(desired));
        Map<String, String> annotations = desired.getMetadata().getAnnotations() == null ? new HashMap<>()
                : new HashMap<>(desired.getMetadata().getAnnotations());
        annotations.put(StreamJobResources.APPLIED_HASH_ANNOTATION, digest);
        desired.getMetadata().setAnnotations(annotations);
        return desired;
    }

    /** Matches when the actual object carries the desired digest and {@code keptFieldsEqual}. */
    public static <R extends HasMetadata> Matcher.Result<R> match(R actual, R desired, boolean keptFieldsEqual) {
        return Matcher.Result.computed(keptFieldsEqual && Objects.equals(digestOf(actual), digestOf(desired)), desired);
    }

    static String digestOf(HasMetadata object) {
        Map<String, String> annotations = object.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(StreamJobResources.APPLIED_HASH_ANNOTATION);
    }

    private static String digest(String content) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(content.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
