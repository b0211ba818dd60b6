package io.oncestream.engine.transform;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.JobConfigs;

/**
 * The filter answered without CEL's interpreter gives CEL's answer on every record, or leaves it
 * to CEL: each filter below runs over generated documents with missing fields, fields of every
 * JSON type, nulls, NaN-free doubles, ints beyond 2^53 and nested objects, and every result
 * (row, filtered out, or the bad-record error) equals the one of the same job with CEL alone.
 * That the comparison is not empty: the common filters are answered for most records.
 */
class FieldFilterTest {

    private static final String[] VALUES = {
        "'PAID'", "'NEW'", "''", "100", "100.0", "100.5", "-3", "0", "0.0", "-0.0", "9007199254740993",
        "9007199254740992", "true", "false", "null", "[1, 2]", "{\"x\": 1}", "'DE'", "'FR'", "1e300",
    };

    private static RecordTransformer transformer(String filter) {
        return RecordTransformer.compile(JobConfigs.parse("""
                {"jobId": "t/filter", "source": {"bootstrapServers": "k:9092", "topics": ["orders"]},
                 "filter": "%s",
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc", "keyspace": "k", "table": "t",
                          "columns": {"id": "value.id"}}}
                """.formatted(filter.replace("\"", "\\\""))));
    }

    /** A document with each of status, amount, flag, country and order.total present or not, of any type. */
    private static String document(Random random, int id) {
        List<String> fields = new ArrayList<>();
        fields.add("\"id\": \"o" + id + "\"");
        for (String name : new String[] {"status", "amount", "flag", "country"}) {
            if (random.nextInt(5) > 0) {
                fields.add("\"" + name + "\": " + json(VALUES[random.nextInt(VALUES.length)]));
            }
        }
        int order = random.nextInt(4);
        if (order == 1) {
            fields.add("\"order\": {\"total\": " + json(VALUES[random.nextInt(VALUES.length)]) + "}");
        } else if (order == 2) {
            fields.add("\"order\": " + json(VALUES[random.nextInt(VALUES.length)]));
        } else if (order == 3) {
            fields.add("\"order\": {}");
        }
        return "{" + String.join(", ", fields) + "}";
    }

    private static String json(String literal) {
        return literal.startsWith("'") ? "\"" + literal.substring(1, literal.length() - 1) + "\"" : literal;
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "value.status == 'PAID' && value.amount > 100.0",
        "value.status == 'PAID' && value.amount > 100",
        "value.status != 'PAID' || value.amount <= 0",
        "!(value.amount >= 100.5) && value.amount < 9007199254740993",
        "value.amount == 100 || value.amount == 100.0 || value.amount == -0.0",
        "value.flag",
        "!value.flag || value.flag == false",
        "has(value.country) && value.country in ['DE', 'FR', 'NL']",
        "value.amount in [100, 0, -3]",
        "has(value.order.total) && value.order.total > 99",
        "value.order.total < 1e300 && true",
        "false || value.status == 'NEW'",
        "value.amount == 'PAID'",
        "value.country in []",
    })
    void answersAsCelDoesOrLeavesItToCel(String filter) {
        RecordTransformer fast = transformer(filter);
        RecordTransformer cel = fast.filteringWithCelOnly();
        assertThat(fast.fieldFilter()).as("the filter has the shape answered without CEL").isNotNull();
        assertThat(cel.fieldFilter()).isNull();
        Random random = new Random(filter.hashCode());
        int answered = 0;
        int records = 4000;
        for (int i = 0; i < records; i++) {
            byte[] value = document(random, i).getBytes(StandardCharsets.UTF_8);
            SourceRecord record = new SourceRecord("orders", 0, i, 1_000L, null, value, Map.of());
            assertThat(fast.apply(record)).as(new String(value, StandardCharsets.UTF_8)).isEqualTo(cel.apply(record));
            try {
                if (fast.fieldFilter().test(CelJson.parse(value, fast.keep())) != null) {
                    answered++;
                }
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }
        System.out.printf("[filter] %s: %d of %d records answered without CEL%n", filter, answered, records);
        assertThat(answered).as("records answered without CEL").isPositive();
    }

    @Test
    void theCommonFilterIsAnsweredForWellFormedRecords() throws Exception {
        RecordTransformer fast = transformer("value.status == 'PAID' && value.amount > 100.0");
        String[] documents = {
            "{\"id\": \"a\", \"status\": \"PAID\", \"amount\": 150.5}",
            "{\"id\": \"b\", \"status\": \"PAID\", \"amount\": 150}",
            "{\"id\": \"c\", \"status\": \"NEW\", \"amount\": 150.5}",
            "{\"id\": \"d\", \"status\": \"PAID\", \"amount\": 99.5, \"items\": [1, 2]}",
        };
        Boolean[] expected = {true, true, false, false};
        for (int i = 0; i < documents.length; i++) {
            Object value = CelJson.parse(documents[i].getBytes(StandardCharsets.UTF_8), fast.keep());
            assertThat(fast.fieldFilter().test(value)).as(documents[i]).isEqualTo(expected[i]);
        }
    }

    @Test
    void whatCelCouldAnswerOtherwiseIsLeftToIt() throws Exception {
        String[][] undecided = {
            {"value.status > 'A'", "{\"status\": \"B\"}"}, // string order: CEL's, by code point
            {"value.amount > 1.5", "{\"amount\": 9007199254740993}"}, // not exact as a double
            {"value.amount == 100", "{\"amount\": 100.0}"}, // equality across types
            {"value.amount > 100", "{}"}, // missing: CEL's error
            {"value.amount > 100", "{\"amount\": null}"},
            {"value.order.total > 100", "{\"order\": 5}"},
            {"has(value.order.total)", "{\"order\": 5}"},
            {"value.country in ['DE', 1]", "{\"country\": \"DE\"}"},
        };
        for (String[] c : undecided) {
            RecordTransformer t = transformer(c[0]);
            assertThat(t.fieldFilter()).as(c[0]).isNotNull();
            assertThat(t.fieldFilter().test(CelJson.parse(c[1].getBytes(StandardCharsets.UTF_8), t.keep()))).as(c[0] + " on " + c[1])
                    .isNull();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "value.amount * 2 > 100",
        "size(value.status) > 2",
        "value.status.startsWith('P')",
        "value.amount > 100 ? true : false",
        "value == null",
        "key == 'a'",
        "value['status'] == 'PAID'",
        "value.items.exists(i, i > 1)",
    })
    void otherShapesGoToCel(String filter) {
        assertThat(transformer(filter).fieldFilter()).isNull();
    }
}
