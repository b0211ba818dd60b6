package io.oncestream.engine.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.common.values.NullValue;

/** JSON as CEL values: maps, lists, strings, {@code int} (Long), {@code double}, bool, null. */
final class CelJson {

    private CelJson() {
    }

    static Object toCel(JsonNode node) {
        switch (node.getNodeType()) {
            case OBJECT: {
                Map<String, Object> map = new LinkedHashMap<>();
                node.fields().forEachRemaining(e -> map.put(e.getKey(), toCel(e.getValue())));
                return map;
            }
            case ARRAY: {
                List<Object> list = new ArrayList<>(node.size());
                node.forEach(n -> list.add(toCel(n)));
                return list;
            }
            case STRING:
                return node.textValue();
            case NUMBER:
                if (node.isIntegralNumber() && node.canConvertToLong()) {
                    return node.longValue();
                }
                return node.doubleValue();
            case BOOLEAN:
                return node.booleanValue();
            case NULL:
                return NullValue.NULL_VALUE;
            default:
                throw new IllegalArgumentException("unsupported JSON node " + node.getNodeType());
        }
    }
}
