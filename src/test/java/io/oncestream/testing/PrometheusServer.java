package io.oncestream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The stack's real Prometheus ({@code deploy/local/prometheus.sh}, Debian's package) as the
 * tests see it: PromQL queries, firing alerts, and rules files loaded at run time.
 */
public final class PrometheusServer {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String url;
    private final Path rulesDir;

    PrometheusServer(LocalService service) {
        var env = service.env();
        this.url = env.get("PROMETHEUS_URL");
        this.rulesDir = Path.of(env.get("PROMETHEUS_RULES_DIR"));
    }

    public String url() {
        return url;
    }

    /** The result vector of an instant PromQL query (empty when it returns no series). */
    public List<JsonNode> query(String promql) {
        JsonNode answer = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        if (!"success".equals(answer.path("status").asText())) {
            throw new IllegalStateException("Prometheus refused " + promql + ": " + answer);
        }
        List<JsonNode> out = new ArrayList<>();
        answer.path("data").path("result").forEach(out::add);
        return out;
    }

    /** The alerts Prometheus holds now, pending or firing: {@code alertname state labels}. */
    public List<String> alerts() {
        List<String> out = new ArrayList<>();
        get("/api/v1/alerts").path("data").path("alerts").forEach(a -> out.add(a.path("labels").path("alertname").asText() + " "
                + a.path("state").asText() + " " + a.path("labels")));
        return out;
    }

    /** Writes a rules file into Prometheus' rules directory and reloads it; the rules' groups must then be loaded. */
    public void loadRules(String name, String yaml) {
        try {
            Files.writeString(rulesDir.resolve(name + ".yaml"), yaml);
            HttpResponse<String> reload = HTTP.send(HttpRequest.newBuilder(URI.create(url + "/-/reload"))
                    .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            if (reload.statusCode() != 200) {
                throw new IllegalStateException("Prometheus did not reload its rules: " + reload.statusCode() + " " + reload.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Removes a rules file written by {@link #loadRules} (and reloads). */
    public void removeRules(String name) {
        try {
            Files.deleteIfExists(rulesDir.resolve(name + ".yaml"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        loadRules("empty", "groups: []\n");
    }

    private JsonNode get(String path) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30))
                    .build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
