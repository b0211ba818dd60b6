package io.oncestream.engine.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The consumer's fetches and polls shrink with a small heap, and only then. */
class FetchSizesTest {

    private static final long MIB = 1024 * 1024;

    @Test
    void aFetchTakesAnEighthOfASmallHeapAndAPartitionAThirtySecond() {
        assertThat(KafkaRecordSource.fetchMaxBytes(18L << 30)).as("a large heap: as before").isEqualTo(32 * MIB);
        assertThat(KafkaRecordSource.partitionFetchBytes(18L << 30)).isEqualTo(4 * MIB);
        assertThat(KafkaRecordSource.fetchMaxBytes(352 * MIB)).as("a 512 MiB pod's heap").isEqualTo(32 * MIB);
        assertThat(KafkaRecordSource.partitionFetchBytes(352 * MIB)).isEqualTo(4 * MIB);
        assertThat(KafkaRecordSource.fetchMaxBytes(96 * MIB)).as("a 256 MiB pod's heap").isEqualTo(12 * MIB);
        assertThat(KafkaRecordSource.partitionFetchBytes(96 * MIB)).isEqualTo(3 * MIB);
        assertThat(KafkaRecordSource.fetchMaxBytes(4 * MIB)).as("never below Kafka's 1 MiB partition default").isEqualTo(MIB);
        assertThat(KafkaRecordSource.partitionFetchBytes(4 * MIB)).isEqualTo(MIB);
    }

    @Test
    void aPollReturnsOneRecordPer32KiBOfAnEighthOfASmallHeap() {
        assertThat(KafkaRecordSource.maxPollRecords(18L << 30)).as("a large heap: as before").isEqualTo(5000);
        assertThat(KafkaRecordSource.maxPollRecords(1280 * MIB)).as("from 1.25 GiB on").isEqualTo(5000);
        assertThat(KafkaRecordSource.maxPollRecords(576 * MIB)).as("a 768 MiB pod's heap").isEqualTo(2304);
        assertThat(KafkaRecordSource.maxPollRecords(96 * MIB)).as("a 256 MiB pod's heap").isEqualTo(384);
        assertThat(KafkaRecordSource.maxPollRecords(16 * MIB)).as("never below 100").isEqualTo(100);
    }

    @Test
    void theJobsOwnPropertiesWin() {
        var config = io.oncestream.engine.config.JobConfigs.parse("""
                {"jobId": "t/fetch", "source": {"bootstrapServers": "k:9092", "topics": ["orders"],
                                                "properties": {"fetch.max.bytes": "1000", "max.partition.fetch.bytes": "500",
                                                               "max.poll.records": "7"}},
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "value.id"}}}
                """).source();
        var props = KafkaRecordSource.consumerProperties(config, 0);
        assertThat(props.getProperty("fetch.max.bytes")).isEqualTo("1000");
        assertThat(props.getProperty("max.partition.fetch.bytes")).isEqualTo("500");
        assertThat(props.getProperty("max.poll.records")).isEqualTo("7");
    }
}
