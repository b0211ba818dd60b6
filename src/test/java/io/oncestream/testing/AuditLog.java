package io.oncestream.testing;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The kube-apiserver's audit log (deploy/local/kube.sh): what a client really asked for and
 * what the server answered, independent of the client's own account of it. Tests take a
 * {@link #mark()} and read the requests after it.
 */
public final class AuditLog {

    /** Verbs that change something. */
    public static final Set<String> WRITES = Set.of("create", "update", "patch", "delete", "deletecollection");

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;

    AuditLog(Path file) {
        this.file = file;
    }

    /**
     * One request: who, what, where, the answer's code, the authorizer's decision ({@code allow} or
     * {@code forbid}; null when none was logged), and when the API server received it (the log
     * is in the order requests completed).
     */
    public record Request(String user, String verb, String resource, String subresource, String namespace, String name,
            int code, String uri, String authorization, java.time.Instant received) {

        public boolean isWrite() {
            return WRITES.contains(verb);
        }

        /**
         * Refused by the authorizer (RBAC), not by admission: a 403 for a write into a namespace
         * being deleted, or over a ResourceQuota, comes after the authorizer allowed it.
         */
        public boolean forbiddenByRbac() {
            return code == 403 && "forbid".equals(authorization);
        }

        @Override
        public String toString() {
            return verb + " " + resource + (subresource == null ? "" : "/" + subresource) + " " + namespace + "/" + name
                    + " -> " + code + " (" + user + ")";
        }
    }

    /** The current end of the log. */
    public long mark() {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The requests logged after {@code mark} that match {@code filter}. */
    public List<Request> since(long mark, Predicate<Request> filter) {
        List<Request> requests = new ArrayList<>();
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length < mark) {
                throw new AssertionError("the audit log " + file + " shrank (rotated?) from " + mark + " to " + length + " bytes");
            }
            byte[] bytes = new byte[(int) (length - mark)];
            in.seek(mark);
            in.readFully(bytes);
            String text = new String(bytes, StandardCharsets.UTF_8);
            int end = text.lastIndexOf('\n');
            for (String line : text.substring(0, end + 1).split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode e = JSON.readTree(line);
                JsonNode ref = e.path("objectRef");
                Request r = new Request(e.path("user").path("username").asText(), e.path("verb").asText(),
                        ref.path("resource").asText(null), ref.path("subresource").asText(null),
                        ref.path("namespace").asText(null), ref.path("name").asText(null),
                        e.path("responseStatus").path("code").asInt(), e.path("requestURI").asText(),
                        e.path("annotations").path("authorization.k8s.io/decision").asText(null),
                        e.hasNonNull("requestReceivedTimestamp") ? java.time.Instant.parse(e.get("requestReceivedTimestamp").asText())
                                : null);
                if (filter.test(r)) {
                    requests.add(r);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the audit log " + file, e);
        }
        return requests;
    }
}
