package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.operator.ProgressDocuments;

/** The worker's lag series: an age its probe has not read is no series, not a 0 that says "caught up". */
class PrometheusMetricsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aPartitionWhoseOldestRecordsTimeIsNotReadHasNoAgeSeries() {
        String json = ProgressDocuments.json("shop/paid-orders", 0, EngineState.WRITING, 12,
                Map.of("orders-0", new long[] {500, 520}, "orders-1", new long[] {300, 300}), true, null);
        ObjectNode tree = (ObjectNode) readTree(json);
        ObjectNode partitions = tree.putObject("lag").put("observedAt", "2026-12-02T10:00:00Z").putObject("partitions");
        ObjectNode behind = partitions.putObject("orders-0").put("committed", 500).put("latest", 520).put("records", 20)
                .put("ageMs", 0).put("exact", true);
        partitions.putObject("orders-1").put("committed", 300).put("latest", 300).put("records", 0).put("ageMs", 0)
                .put("exact", true);
        ProgressTracker.Timings timings = new ProgressTracker("shop/paid-orders", 0, 2).timings();

        String unknown = PrometheusMetrics.render(JSON.convertValue(tree, Progress.class), timings);
        String labels = "{job_id=\"shop/paid-orders\",worker=\"0\",partition=\"orders-";
        assertThat(unknown).contains("oncestream_partition_lag_records" + labels + "0\"} 20\n",
                "oncestream_partition_lag_seconds" + labels + "1\"} 0.0\n");
        assertThat(unknown).doesNotContain("oncestream_partition_lag_seconds" + labels + "0\"}");

        behind.put("oldestRecordMs", 1_000L).put("ageMs", 1_500);
        assertThat(PrometheusMetrics.render(JSON.convertValue(tree, Progress.class), timings))
                .contains("oncestream_partition_lag_seconds" + labels + "0\"} 1.5\n");
    }

    private static com.fasterxml.jackson.databind.JsonNode readTree(String json) {
        try {
            return JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
