package io.oncestream.engine.transform;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Decoding only the fields a job's expressions read (ValuePaths) gives exactly the rows,
 * filtered records and bad records that decoding every field gives.
 */
class ValuePathsTest {

    /** Filters and columns that read the value in every way CEL allows. */
    private static final List<Map.Entry<String, Map<String, String>>> JOBS = List.of(
            Map.entry("value.status == 'PAID' && value.amount > 100.0", Map.of("id", "value.id", "amount", "value.amount")),
            Map.entry("has(value.order) && value.order.items.size() > 0 && has(value.order.shipping)"
                    + " && value.order.shipping.country in ['DE', 'FR', 'NL']", Map.of("id", "value.order.id")),
            Map.entry("value.order.items.exists(i, i.sku == 'B')", Map.of("skus", "value.order.items.map(i, i.sku)")),
            Map.entry("'shipping' in value.order", Map.of("id", "value.order.id", "country", "value.order.shipping.country")),
            Map.entry("size(value) > 1", Map.of("id", "value.id")),
            Map.entry("value['status'] == 'PAID'", Map.of("id", "value.id")),
            Map.entry("[1, 2].exists(value, value > 1) && value == 2", Map.of("one", "1")),
            Map.entry("value.customer.name.lowerAscii().startsWith('ada')", Map.of("id", "value.id",
                    "name", "value.customer.name.trim()")),
            Map.entry("", Map.of("id", "value.id", "status", "has(value.status) ? value.status : 'none'")),
            Map.entry("value.amount > 10", Map.of("whole", "value")));

    private static final List<String> DOCUMENTS = List.of(
            "{\"id\": 1, \"status\": \"PAID\", \"amount\": 150.5, \"customer\": {\"name\": \" Ada \", \"tier\": [1, 2]}}",
            "{\"id\": 2, \"status\": \"OPEN\", \"amount\": 99, \"note\": {\"deep\": {\"deeper\": [{\"x\": null}]}}}",
            "{\"id\": 3, \"amount\": 500, \"status\": \"PAID\", \"status\": \"OPEN\"}",
            "{\"order\": {\"id\": \"O-17\", \"items\": [{\"sku\": \"A\"}, {\"sku\": \"B\"}], \"shipping\": {\"country\": \"DE\"},"
                    + " \"gift\": {\"wrap\": true}}, \"audit\": [1, 2, 3]}",
            "{\"order\": {\"id\": \"O-18\", \"items\": []}}",
            "{\"id\": 4, \"status\": \"PAID\", \"amount\": 101, \"extra\": [1, {\"a\": ]}",
            "{\"id\": 5, \"status\": \"PAID\", \"amount\": 101, \"extra\": \"\\u00e9t\\u00e9\"} trailing",
            "{\"status\": \"PAID\", \"amount\": 200}",
            "[1, 2, 3]",
            "\"PAID\"",
            "{}");

    @Test
    void decodingOnlyWhatIsReadGivesTheSameResultAsDecodingEverything() {
        List<String> compared = new ArrayList<>();
        for (Map.Entry<String, Map<String, String>> job : JOBS) {
            RecordTransformer pruned = CelLanguageTest.transformer(job.getKey(), job.getValue());
            RecordTransformer whole = pruned.decodingWholeValues();
            for (String document : DOCUMENTS) {
                TransformResult expected = whole.apply(CelLanguageTest.record(document));
                TransformResult actual = pruned.apply(CelLanguageTest.record(document));
                if (expected instanceof TransformResult.Bad bad) {
                    assertThat(actual).as(job + " on " + document).isInstanceOf(TransformResult.Bad.class);
                    assertThat(((TransformResult.Bad) actual).reason()).as(job + " on " + document)
                            .startsWith(bad.reason().substring(0, Math.min(bad.reason().length(), 24)));
                } else {
                    assertThat(actual).as(job + " on " + document).isEqualTo(expected);
                }
                compared.add(expected.getClass().getSimpleName());
            }
        }
        assertThat(compared).as("rows, filtered and bad records were all compared").contains("Row", "Filtered", "Bad");
    }

    @Test
    void theCommonJobReadsFewFieldsAndAWholeValueIsKeptWhole() {
        ValuePaths.Node keep = keep("value.status == 'PAID' && value.amount > 100.0", "value.customer.name", "value.id");
        assertThat(keep).isNotNull();
        assertThat(keep.whole()).isFalse();
        assertThat(keep.child("status").whole()).isTrue();
        assertThat(keep.child("customer").whole()).isFalse();
        assertThat(keep.child("customer").child("name").whole()).isTrue();
        assertThat(keep.child("note")).as("a field nothing reads").isNull();
        assertThat(keep("value.order.items.size() > 0").child("order").child("items").whole()).isTrue();
        assertThat(keep("size(value) > 0")).as("value used as a whole").isNull();
        assertThat(keep("value['id'] == 1")).as("value indexed").isNull();
        assertThat(keep("[1].exists(value, value > 0)")).as("a macro variable named value").isNull();
    }

    private static ValuePaths.Node keep(String filter, String... columns) {
        Map<String, String> cols = new java.util.LinkedHashMap<>();
        for (int i = 0; i < columns.length; i++) {
            cols.put("c" + i, columns[i]);
        }
        if (cols.isEmpty()) {
            cols.put("c", "1");
        }
        return CelLanguageTest.transformer(filter, cols).keep();
    }
}
