package io.oncestream.operator.status;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.AggregatedOperatorException;

/** What a failed reconcile says in a condition and an event: the API server's own words where it gave some. */
public final class ReconcileFailures {

    private static final int MAX = 1000;

    private ReconcileFailures() {
    }

    /**
     * The failure in one line: for a refusal by the API server its status message (e.g.
     * {@code services "x-workers" is forbidden: exceeded quota ...}), one per failed dependent
     * object; otherwise the innermost message.
     */
    public static String describe(Throwable failure) {
        List<String> messages = new ArrayList<>();
        collect(failure, messages, Collections.newSetFromMap(new IdentityHashMap<>()));
        String text = messages.isEmpty() ? failure.getClass().getSimpleName() : String.join("; ", messages);
        return text.length() > MAX ? text.substring(0, MAX - 3) + "..." : text;
    }

    private static void collect(Throwable t, List<String> out, Set<Throwable> seen) {
        if (t == null || !seen.add(t)) {
            return;
        }
        if (t instanceof AggregatedOperatorException aggregated) {
            for (Map.Entry<String, Exception> e : aggregated.getAggregatedExceptions().entrySet()) {
                List<String> inner = new ArrayList<>();
                collect(e.getValue(), inner, seen);
                inner.forEach(m -> out.add(e.getKey() + ": " + m)); // the dependent's name, e.g. "service"
            }
            return;
        }
        if (t instanceof KubernetesClientException k && k.getStatus() != null && k.getStatus().getMessage() != null) {
            out.add(k.getStatus().getMessage() + " (HTTP " + k.getCode() + ")");
            return;
        }
        if (t.getCause() != null && t.getCause() != t) {
            collect(t.getCause(), out, seen);
            return;
        }
        out.add(t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
    }
}
