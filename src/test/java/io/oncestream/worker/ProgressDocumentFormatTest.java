package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.oncestream.contract.ChainPoint;
import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.contract.RecordTotals;
import io.oncestream.testing.LocalService;

/**
 * The {@code GET /progress} document is API (the operator of another release reads it): a worker
 * serves every field of this fixed snapshot exactly as the committed file
 * {@code src/test/resources/formats/progress.json} says, byte for byte.
 */
class ProgressDocumentFormatTest {

    private static final Path GOLDEN = Path.of("src/test/resources/formats/progress.json");

    /** A worker at its barrier with every field set: a running range, a last batch, a lag report, rates and a seal. */
    static Progress everyField() {
        Map<String, Progress.PartitionProgress> partitions = new TreeMap<>();
        partitions.put("orders-0", new Progress.PartitionProgress(500, 520, 500L, 520L));
        partitions.put("orders-2", new Progress.PartitionProgress(480, 480, null, null));
        Map<String, Progress.PartitionLag> lag = new TreeMap<>();
        lag.put("orders-0", new Progress.PartitionLag(500, 520, 20, 1764700000000L, 1500, true));
        lag.put("orders-1", new Progress.PartitionLag(300, 300, 0, null, 0, false));
        CheckpointSeal seal = new CheckpointSeal(2, 12, Map.of("orders-0", new ChainPoint(500, 1764700000123456L)),
                1764700001500L, new RecordTotals(1000, 100, 850, 50));
        return new Progress("shop/paid-orders", 1, 3, EngineState.AT_BARRIER.name(), 12, 13L, partitions,
                new Progress.Totals(1000, 100, 850, 50, 7, 13),
                new Progress.BatchFigures(12, true, 100, 10, 85, 5, new java.util.LinkedHashMap<>(Map.of("total", 100L)), 1000.0, 850.5),
                false, true, "Cassandra: no node was available", "2026-12-02T10:00:00Z", 1, seal,
                new Progress.LagReport("2026-12-02T09:59:58Z", lag), new Progress.Rates(60, 250.4, 200.2, null));
    }

    @Test
    void aWorkerServesTheProgressDocumentAsCommitted() throws IOException, InterruptedException {
        String served;
        try (WorkerHttpServer server = new WorkerHttpServer("127.0.0.1", 0, ProgressDocumentFormatTest::everyField,
                () -> null, () -> true, epoch -> null)) {
            served = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/progress")).build(), HttpResponse.BodyHandlers.ofString()).body();
        }
        Path golden = LocalService.repoDir().resolve(GOLDEN);
        if (!Files.exists(golden) || !Files.readString(golden).equals(served)) {
            Path actual = LocalService.repoDir().resolve("target/formats/progress.json");
            Files.createDirectories(actual.getParent());
            Files.writeString(actual, served);
        }
        assertThat(served).as("the served document (written to target/formats/progress.json); a change of the format"
                + " breaks operators that read it").isEqualTo(Files.readString(golden));
    }
}
