package io.oncestream.engine.cassandra;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.datastax.oss.driver.api.core.type.DataType;
import com.datastax.oss.driver.api.core.type.DataTypes;
import com.datastax.oss.driver.api.core.type.ListType;
import com.datastax.oss.driver.api.core.type.MapType;
import com.datastax.oss.driver.api.core.type.SetType;

/**
 * Converts CEL results (String, Long, Double, Boolean, List, Map, null) into the Java values
 * the driver binds for a column's CQL type. Only lossless conversions: 2.5 into an {@code int}
 * column is an error, not 2.
 */
final class ColumnValues {

    private ColumnValues() {
    }

    /** The column's value, or an {@link IllegalArgumentException} saying why not. */
    static Object convert(Object v, DataType type) {
        if (v == null) {
            return null;
        }
        if (type.equals(DataTypes.TEXT) || type.equals(DataTypes.ASCII)) {
            if (v instanceof String || v instanceof Long || v instanceof Double || v instanceof Boolean) {
                return v.toString();
            }
        } else if (type.equals(DataTypes.BIGINT)) {
            return integral(v, Long.MIN_VALUE, Long.MAX_VALUE);
        } else if (type.equals(DataTypes.INT)) {
            return (int) integral(v, Integer.MIN_VALUE, Integer.MAX_VALUE);
        } else if (type.equals(DataTypes.SMALLINT)) {
            return (short) integral(v, Short.MIN_VALUE, Short.MAX_VALUE);
        } else if (type.equals(DataTypes.TINYINT)) {
            return (byte) integral(v, Byte.MIN_VALUE, Byte.MAX_VALUE);
        } else if (type.equals(DataTypes.VARINT)) {
            return BigInteger.valueOf(integral(v, Long.MIN_VALUE, Long.MAX_VALUE));
        } else if (type.equals(DataTypes.DOUBLE)) {
            if (v instanceof Number n) {
                return n.doubleValue();
            }
        } else if (type.equals(DataTypes.FLOAT)) {
            if (v instanceof Number n) {
                return n.floatValue();
            }
        } else if (type.equals(DataTypes.DECIMAL)) {
            if (v instanceof Long l) {
                return BigDecimal.valueOf(l);
            }
            if (v instanceof Double d) {
                return BigDecimal.valueOf(d);
            }
            if (v instanceof String s) {
                return parse(() -> new BigDecimal(s), s, type);
            }
        } else if (type.equals(DataTypes.BOOLEAN)) {
            if (v instanceof Boolean) {
                return v;
            }
        } else if (type.equals(DataTypes.TIMESTAMP)) {
            if (v instanceof Long ms) {
                return Instant.ofEpochMilli(ms);
            }
            if (v instanceof String s) {
                return parse(() -> Instant.parse(s), s, type);
            }
        } else if (type.equals(DataTypes.DATE)) {
            if (v instanceof String s) {
                return parse(() -> LocalDate.parse(s), s, type);
            }
        } else if (type.equals(DataTypes.UUID) || type.equals(DataTypes.TIMEUUID)) {
            if (v instanceof String s) {
                return parse(() -> UUID.fromString(s), s, type);
            }
        } else if (type.equals(DataTypes.BLOB)) {
            if (v instanceof String s) {
                return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
            }
        } else if (type.equals(DataTypes.INET)) {
            if (v instanceof String s && s.matches("[0-9a-fA-F:.]+")) {
                return parse(() -> InetAddress.getByName(s), s, type);
            }
        } else if (type instanceof ListType list && v instanceof List<?> items) {
            List<Object> out = new ArrayList<>();
            for (Object item : items) {
                out.add(requireElement(convert(item, list.getElementType())));
            }
            return out;
        } else if (type instanceof SetType set && v instanceof List<?> items) {
            Set<Object> out = new LinkedHashSet<>();
            for (Object item : items) {
                out.add(requireElement(convert(item, set.getElementType())));
            }
            return out;
        } else if (type instanceof MapType map && v instanceof Map<?, ?> entries) {
            Map<Object, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : entries.entrySet()) {
                out.put(requireElement(convert(e.getKey(), map.getKeyType())),
                        requireElement(convert(e.getValue(), map.getValueType())));
            }
            return out;
        }
        throw new IllegalArgumentException(describe(v) + " cannot be stored in a " + type.asCql(false, true) + " column");
    }

    private static long integral(Object v, long min, long max) {
        long value;
        if (v instanceof Long l) {
            value = l;
        } else if (v instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d)) {
            value = d.longValue();
        } else {
            throw new IllegalArgumentException(describe(v) + " is not a whole number");
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(value + " is out of range [" + min + ", " + max + "]");
        }
        return value;
    }

    private static Object requireElement(Object v) {
        if (v == null) {
            throw new IllegalArgumentException("collections cannot hold null");
        }
        return v;
    }

    private interface Parser {
        Object parse() throws Exception;
    }

    private static Object parse(Parser parser, String text, DataType type) {
        try {
            return parser.parse();
        } catch (Exception e) {
            throw new IllegalArgumentException("'" + text + "' is not a valid " + type.asCql(false, true));
        }
    }

    private static String describe(Object v) {
        String text = String.valueOf(v);
        if (text.length() > 60) {
            text = text.substring(0, 60) + "...";
        }
        return v.getClass().getSimpleName() + " " + text;
    }
}
