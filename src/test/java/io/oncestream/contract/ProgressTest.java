package io.oncestream.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/** One record for the {@code /progress} document, both ways: what a worker writes is what the operator reads. */
class ProgressTest {

    @Test
    void theCommittedDocumentReadsBackToTheSameBytes() throws IOException {
        String golden = Files.readString(LocalService.repoDir().resolve("src/test/resources/formats/progress.json"));
        Progress read = Progress.parse(golden);
        assertThat(read.engineState()).isEqualTo(EngineState.AT_BARRIER);
        assertThat(read.barrier().partitions()).containsEntry("orders-0", new ChainPoint(500, 1764700000123456L));
        assertThat(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(read)).isEqualTo(golden);
    }

    @Test
    void aNewerWorkersFieldsAreIgnoredAndItsStatesKeptAsText() {
        Progress newer = Progress.parse("""
                {"jobId": "shop/paid-orders", "workerIndex": 0, "state": "DEFRAGMENTING", "batchId": 3,
                 "partitions": {"orders-0": {"committed": 5, "latest": 6, "start": null, "end": null, "skew": 1}},
                 "shinyNewField": {"x": 1}}
                """);
        assertThat(newer.state()).isEqualTo("DEFRAGMENTING");
        assertThat(newer.engineState()).isNull();
        assertThat(newer.partitions().get("orders-0").committed()).isEqualTo(5);
        assertThatThrownBy(() -> Progress.parse("[]")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("not a worker progress document: ");
    }
}
