package io.oncestream.engine.transform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.config.TestConfigs;

class RecordTransformerTest {

    private static final JobConfig CONFIG = JobConfigs.parse(
            TestConfigs.orders("shop/paid", "k:9092", "orders", "c:9042", "dc1", "shop", "paid"));
    private final RecordTransformer transformer = RecordTransformer.compile(CONFIG);

    @Test
    void keepsAndMapsMatchingRecords() {
        TransformResult r = transformer.apply(record(
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 150.5, \"customer\": {\"name\": \"Ada\"}, \"seq\": 7}"));
        assertThat(r).isEqualTo(new TransformResult.Row(Map.of("order_id", "o1", "amount", 150.5, "customer", "Ada", "seq", 7L)));
    }

    @Test
    void integerAmountsCompareWithTheDoubleThreshold() {
        assertThat(transformer.apply(record(
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 101, \"customer\": {\"name\": \"A\"}, \"seq\": 1}")))
                .isInstanceOf(TransformResult.Row.class);
    }

    @Test
    void dropsRecordsTheFilterRejects() {
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"status\": \"NEW\", \"amount\": 500}")))
                .isInstanceOf(TransformResult.Filtered.class);
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 100}")))
                .isInstanceOf(TransformResult.Filtered.class);
    }

    @Test
    void malformedJsonAndMissingFieldsAreBadRecordsWithAReason() {
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"status\": ")))
                .isInstanceOfSatisfying(TransformResult.Bad.class, b -> assertThat(b.reason()).startsWith("value is not valid JSON"));
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"status\": \"PAID\"} trailing")))
                .isInstanceOfSatisfying(TransformResult.Bad.class, b -> assertThat(b.reason()).startsWith("value is not valid JSON"));
        assertThat(transformer.apply(record("")))
                .isInstanceOfSatisfying(TransformResult.Bad.class, b -> assertThat(b.reason()).contains("empty value"));
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"amount\": 500}")))
                .isInstanceOfSatisfying(TransformResult.Bad.class, b -> assertThat(b.reason()).startsWith("filter: ")
                        .contains("status"));
        assertThat(transformer.apply(record("{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 500, \"seq\": 1}")))
                .isInstanceOfSatisfying(TransformResult.Bad.class, b -> assertThat(b.reason())
                        .startsWith("sink.columns.customer: ").contains("customer"));
    }

    @Test
    void compileErrorsNameTheField() {
        String bad = TestConfigs.orders("j", "k:1", "t", "c:1", "d", "k", "t").replace("\"value.customer.name\"", "\"value.customer.\"");
        assertThatThrownBy(() -> RecordTransformer.compile(JobConfigs.parse(bad)))
                .isInstanceOf(InvalidConfigException.class)
                .satisfies(e -> assertThat(((InvalidConfigException) e).field()).isEqualTo("sink.columns.customer"));
        String notBool = TestConfigs.orders("j", "k:1", "t", "c:1", "d", "k", "t")
                .replace("\"value.status == 'PAID' && value.amount > 100\"", "\"value.amount + 1\"");
        assertThatThrownBy(() -> RecordTransformer.compile(JobConfigs.parse(notBool)))
                .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("filter: CEL expression does not compile");
    }

    @Test
    void recordMetadataIsVisible() {
        String json = TestConfigs.orders("j", "k:1", "t", "c:1", "d", "k", "t")
                .replace("\"value.status == 'PAID' && value.amount > 100\"", "\"headers['src'] == 'web' && key == 'k1'\"")
                .replace("\"value.customer.name\"", "\"topic + '/' + string(partition) + '/' + string(offset) + '/' + string(timestamp)\"");
        TransformResult r = RecordTransformer.compile(JobConfigs.parse(json)).apply(new SourceRecord("orders", 2, 17, 1234,
                "k1".getBytes(StandardCharsets.UTF_8), "{\"id\": \"x\", \"amount\": 1, \"seq\": 2}".getBytes(StandardCharsets.UTF_8),
                Map.of("src", "web")));
        assertThat(r).isInstanceOfSatisfying(TransformResult.Row.class,
                row -> assertThat(row.columns()).containsEntry("customer", "orders/2/17/1234"));
    }

    private static SourceRecord record(String json) {
        return new SourceRecord("orders", 0, 1, 1000, null, json.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    @Test
    void fieldPathShortcutAgreesWithCel() {
        String base = TestConfigs.orders("j", "k:1", "t", "c:1", "d", "k", "t");
        // Parentheses keep the same meaning but make the expression go through CEL.
        RecordTransformer viaCel = RecordTransformer.compile(JobConfigs.parse(base
                .replace("\"value.id\"", "\"(value.id)\"").replace("\"value.amount\"", "\"(value.amount)\"")
                .replace("\"value.customer.name\"", "\"(value.customer.name)\"").replace("\"value.seq\"", "\"(value.seq)\"")));
        for (String json : new String[] {
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 150, \"customer\": {\"name\": \"A\"}, \"seq\": 1}",
                "{\"id\": null, \"status\": \"PAID\", \"amount\": 150.5, \"customer\": {\"name\": [1, 2]}, \"seq\": 1.5}",
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 150, \"customer\": \"flat\", \"seq\": 1}",
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 150, \"customer\": null, \"seq\": 1}",
                "{\"id\": \"o1\", \"status\": \"PAID\", \"amount\": 150, \"seq\": 1}"}) {
            TransformResult fast = transformer.apply(record(json));
            TransformResult cel = viaCel.apply(record(json));
            assertThat(fast.getClass()).as(json).isEqualTo(cel.getClass());
            if (fast instanceof TransformResult.Row row) {
                assertThat(row).as(json).isEqualTo(cel);
            }
        }
    }
}
