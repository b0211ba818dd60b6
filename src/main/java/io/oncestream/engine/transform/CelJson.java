package io.oncestream.engine.transform;

import java.util.ArrayList;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.cel.common.values.NullValue;

/** JSON as CEL values: maps, lists, strings, {@code int} (Long), {@code double}, bool, null. */
final class CelJson {

    /**
     * Jackson's own parser of decimal numbers (FastDoubleParser), correctly rounded like
     * {@link Double#parseDouble} and faster: in a loop that reads the benchmark's orders, 1.13-1.17x
     * the documents per second (CelJsonTest checks the doubles are the JDK's).
     */
    private static final JsonFactory FACTORY = JsonFactory.builder().enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER).build();

    private CelJson() {
    }

    /**
     * Parses one JSON document straight into CEL values (no intermediate tree: this runs for
     * every record). Trailing content after the document is an error, as is an empty input.
     */
    static Object parse(byte[] bytes) throws IOException {
        return parse(bytes, null);
    }

    /**
     * As {@link #parse(byte[])}, building only the fields {@code keep} names (null: all of
     * them). The others are still read, so a document that is not JSON is refused the same.
     */
    static Object parse(byte[] bytes, ValuePaths.Node keep) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new JsonParseException(p, "empty value");
            }
            Object value = read(p, keep);
            if (p.nextToken() != null) {
                throw new JsonParseException(p, "unexpected content after the JSON value");
            }
            return value;
        }
    }

    private static Object read(JsonParser p, ValuePaths.Node keep) throws IOException {
        switch (p.currentToken()) {
            case START_OBJECT: {
                Map<String, Object> map = new LinkedHashMap<>();
                boolean all = keep == null || keep.whole();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    ValuePaths.Node child = all ? null : keep.child(name);
                    if (all || child != null) {
                        map.put(name, read(p, child));
                    } else {
                        p.skipChildren(); // not read by any expression: tokenized, not built
                    }
                }
                return map;
            }
            case START_ARRAY: {
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(read(p, null));
                }
                return list;
            }
            case VALUE_STRING:
                return p.getText();
            case VALUE_NUMBER_INT:
                if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    return (Object) p.getDoubleValue(); // beyond int64: CEL has no bigger integer
                }
                return (Object) p.getLongValue();
            case VALUE_NUMBER_FLOAT:
                return p.getDoubleValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return NullValue.NULL_VALUE;
            default:
                throw new JsonParseException(p, "unexpected token " + p.currentToken());
        }
    }
}
