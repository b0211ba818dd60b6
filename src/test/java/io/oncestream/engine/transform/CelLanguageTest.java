package io.oncestream.engine.transform;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.JobConfigs;

/**
 * The CEL that filters and columns may use, on decoded JSON records: the standard macros and
 * the string, math, list, set and regex extensions (docs/worker.md lists them). {@code has} is
 * the way to test an optional field without making the record a bad one.
 */
class CelLanguageTest {

    private static final String ORDER = """
            {"order": {"id": "O-17", "customer": "  Ada Lovelace ", "tags": "rush,gift",
                       "items": [{"sku": "A", "qty": 2, "price": 9.5}, {"sku": "B", "qty": 1, "price": 20}],
                       "shipping": {"country": "DE"}}}
            """;
    private static final String NO_SHIPPING = """
            {"order": {"id": "O-18", "items": [{"sku": "C", "qty": 3, "price": 1}]}}
            """;

    @Test
    void theFilterOfTheIssueCompilesAndSelects() {
        String filter = "has(value.order) && value.order.items.size() > 0 && has(value.order.shipping)"
                + " && value.order.shipping.country in ['DE', 'FR', 'NL']";
        RecordTransformer t = transformer(filter, Map.of("id", "value.order.id"));
        assertThat(t.apply(record(ORDER))).isEqualTo(new TransformResult.Row(Map.of("id", "O-17")));
        assertThat(t.apply(record(NO_SHIPPING))).as("has() on a missing field: filtered out, not a bad record")
                .isInstanceOf(TransformResult.Filtered.class);
        assertThat(t.apply(record("{\"other\": 1}"))).isInstanceOf(TransformResult.Filtered.class);
        assertThat(transformer("value.order.shipping.country == 'DE'", Map.of("id", "value.order.id")).apply(record(NO_SHIPPING)))
                .as("the same test without has(): a bad record").isInstanceOf(TransformResult.Bad.class);
    }

    @Test
    void standardMacros() {
        assertThat(eval("value.order.items.all(i, i.qty > 0)")).isEqualTo(true);
        assertThat(eval("value.order.items.exists(i, i.sku == 'B')")).isEqualTo(true);
        assertThat(eval("value.order.items.exists_one(i, i.qty > 1)")).isEqualTo(true);
        assertThat(eval("value.order.items.map(i, i.sku)")).isEqualTo(List.of("A", "B"));
        assertThat(eval("value.order.items.filter(i, i.price > 10).map(i, i.sku)")).isEqualTo(List.of("B"));
        // Arithmetic is not mixed in CEL (comparisons are): JSON numbers may be int or double, so convert both.
        assertThat(eval("value.order.items.map(i, double(i.qty) * double(i.price))")).isEqualTo(List.of(19.0, 20.0));
        assertThat(transformer("", Map.of("v", "value.order.items.map(i, i.qty * i.price)")).apply(record(ORDER)))
                .isInstanceOf(TransformResult.Bad.class);
        assertThat(eval("has(value.order.shipping.country) ? value.order.shipping.country : 'none'")).isEqualTo("DE");
    }

    @Test
    void stringExtensions() {
        assertThat(eval("value.order.customer.trim().lowerAscii()")).isEqualTo("ada lovelace");
        assertThat(eval("value.order.customer.trim().upperAscii()")).isEqualTo("ADA LOVELACE");
        assertThat(eval("value.order.tags.split(',')")).isEqualTo(List.of("rush", "gift"));
        assertThat(eval("value.order.id.replace('O-', 'order ')")).isEqualTo("order 17");
        assertThat(eval("value.order.id.substring(2)")).isEqualTo("17");
        assertThat(eval("value.order.id.indexOf('-')")).isEqualTo(1L);
        assertThat(eval("value.order.id.charAt(0)")).isEqualTo("O");
        assertThat(eval("value.order.items.map(i, i.sku).join('+')")).isEqualTo("A+B");
    }

    @Test
    void mathListSetAndRegexExtensions() {
        assertThat(eval("math.greatest(value.order.items.map(i, i.qty))")).isEqualTo(2L);
        assertThat(eval("math.round(9.5)")).isEqualTo(10.0);
        assertThat(eval("math.abs(-3)")).isEqualTo(3L);
        assertThat(eval("value.order.items.map(i, i.sku).reverse()")).isEqualTo(List.of("B", "A"));
        assertThat(eval("[3, 1, 2, 1].distinct().sort()")).isEqualTo(List.of(1L, 2L, 3L));
        assertThat(eval("[[1], [2, 3]].flatten()")).isEqualTo(List.of(1L, 2L, 3L));
        assertThat(eval("sets.contains(value.order.items.map(i, i.sku), ['A'])")).isEqualTo(true);
        assertThat(eval("regex.extract(value.order.id, '[0-9]+')")).isEqualTo(java.util.Optional.of("17"));
        assertThat(eval("value.order.id.matches('^O-[0-9]+$')")).isEqualTo(true);
    }

    private static Object eval(String expression) {
        TransformResult r = transformer("", Map.of("v", expression)).apply(record(ORDER));
        assertThat(r).as(expression).isInstanceOf(TransformResult.Row.class);
        return ((TransformResult.Row) r).columns().get("v");
    }

    static RecordTransformer transformer(String filter, Map<String, String> columns) {
        StringBuilder cols = new StringBuilder();
        columns.forEach((c, e) -> cols.append(cols.isEmpty() ? "" : ", ").append('"').append(c).append("\": \"")
                .append(e.replace("\"", "\\\"")).append('"'));
        return RecordTransformer.compile(JobConfigs.parse("""
                {"jobId": "t/cel", "source": {"bootstrapServers": "k:9092", "topics": ["orders"]},
                 "filter": "%s",
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {%s}}}
                """.formatted(filter.replace("\"", "\\\""), cols)));
    }

    static SourceRecord record(String json) {
        return new SourceRecord("orders", 0, 1, 1000, null, json.getBytes(StandardCharsets.UTF_8), Map.of());
    }
}
