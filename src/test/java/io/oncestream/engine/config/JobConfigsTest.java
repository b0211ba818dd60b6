package io.oncestream.engine.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.oncestream.contract.RecordFormat;
import io.oncestream.contract.StartingOffsets;

class JobConfigsTest {

    private static final String VALID = TestConfigs.orders("shop/paid", "k:9092", "orders", "c:9042", "dc1", "shop", "paid");

    @Test
    void defaultsAreFilledIn() {
        JobConfig c = JobConfigs.parse(VALID);
        assertThat(c.source().startingOffsets()).isEqualTo(StartingOffsets.EARLIEST);
        assertThat(c.source().failOnDataLoss()).isTrue();
        assertThat(c.source().groupId()).isEqualTo("oncestream-shop.paid");
        assertThat(c.sink().maxInFlight()).isEqualTo(256);
        assertThat(c.sink().maxBatchRows()).isEqualTo(32);
        assertThat(c.sink().maxBatchPartitions()).isEqualTo(10);
        assertThat(c.checkpoint().retainBatches()).isEqualTo(100);
        assertThat(c.parallelism()).isEqualTo(1);
        assertThat(JobConfigs.parse(JobConfigs.toJson(c))).isEqualTo(c);
    }

    @Test
    void enumsAreWrittenAsAStreamJobSpellsThemAndReadInEitherCase() {
        JobConfig c = JobConfigs.parse(VALID);
        assertThat(JobConfigs.toJson(c)).contains("\"startingOffsets\" : \"earliest\"").contains("\"format\" : \"json\"");
        // Configurations written before the enums were shared spelled them in capitals.
        String capitals = VALID.replace("\"format\": \"json\"", "\"format\": \"STRING\"");
        assertThat(capitals).isNotEqualTo(VALID);
        assertThat(JobConfigs.parse(capitals).format()).isEqualTo(RecordFormat.STRING);
    }

    @Test
    void errorsNameTheField() {
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"topics\": [\"orders\"]", "\"topics\": []")))
                .isInstanceOf(InvalidConfigException.class).hasMessage("source.topics: needs at least one topic");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"c:9042\"", "\"c\"")))
                .hasMessage("sink.contactPoints[0]: 'c' is not host:port");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"ONE\"", "\"SOME\"")))
                .hasMessageStartingWith("sink.consistency: 'SOME' is not a consistency level (one of [ONE, TWO");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"maxRecordsPerBatch\": 500", "\"maxRecordsPerBatch\": 0")))
                .hasMessage("source.maxRecordsPerBatch: must be at least 1, was 0");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"format\": \"json\"", "\"format\": \"xml\"")))
                .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("format: ");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"trigger\"", "\"triger\"")))
                .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("triger: ");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"seq\": \"value.seq\"", "\"bad-name\": \"value.seq\"")))
                .hasMessageStartingWith("sink.columns.bad-name: 'bad-name' is not a CQL identifier");
        assertThatThrownBy(() -> JobConfigs.parse("[1]")).hasMessage("(document): must be a JSON object");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"consistency\": \"ONE\",",
                "\"consistency\": \"ONE\", \"maxBatchRows\": 8, \"maxBatchPartitions\": 9,")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessage("sink.maxBatchPartitions: must be 1..sink.maxBatchRows (8), was 9");
        assertThatThrownBy(() -> JobConfigs.parse(VALID.replace("\"consistency\": \"ONE\",",
                "\"consistency\": \"ONE\", \"maxBatchPartitions\": 0,")))
                .hasMessage("sink.maxBatchPartitions: must be 1..sink.maxBatchRows (32), was 0");
    }
}
