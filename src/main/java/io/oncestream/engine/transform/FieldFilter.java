package io.oncestream.engine.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.parser.Operator;

/**
 * The common shape of a filter, answered without CEL's interpreter: comparisons of fields of
 * {@code value} with literals, {@code has(value.a.b)} and {@code value.a in [literals]}, joined by
 * {@code &&}, {@code ||} and {@code !} ({@code value.status == 'PAID' && value.amount > 100.0}).
 *
 * <p>It answers only where the answer is certain to be CEL's: a field that is missing, a value
 * of another type than the literal's (except int against double, compared as numbers as the job's
 * CEL options say), a string ordering, a NaN or an int beyond 2<sup>53</sup> against a double
 * leave the comparison undecided, and an undecided filter is evaluated by CEL, which gives the
 * result or the error it always gave. {@code &&} and {@code ||} decide as CEL's do, whichever
 * side is undecided: {@code false && x} and {@code x && false} are false, {@code true || x} and
 * {@code x || true} are true. {@code FieldFilterTest} checks it against CEL on generated records.
 */
final class FieldFilter {

    /** TRUE, FALSE, or null: undecided, CEL must evaluate. */
    @FunctionalInterface
    private interface Test {
        Boolean test(Object value);
    }

    /** An operand: a field of the value, or a literal; {@link #MISSING} when the field is not there. */
    @FunctionalInterface
    private interface Operand {
        Object get(Object value);
    }

    private static final Object MISSING = new Object();
    private static final long EXACT_IN_DOUBLE = 1L << 53;

    private final Test test;

    private FieldFilter(Test test) {
        this.test = test;
    }

    /** The filter of this shape, or null if {@code expr} has another. */
    static FieldFilter of(CelExpr expr) {
        Test t = test(expr);
        return t == null ? null : new FieldFilter(t);
    }

    /** TRUE or FALSE where certain, else null (evaluate with CEL). {@code value} is the decoded JSON value. */
    Boolean test(Object value) {
        return test.test(value);
    }

    private static Test test(CelExpr expr) {
        switch (expr.getKind()) {
            case CONSTANT:
                if (expr.constant().getKind() == CelConstant.Kind.BOOLEAN_VALUE) {
                    Boolean b = expr.constant().booleanValue();
                    return v -> b;
                }
                return null;
            case SELECT: {
                if (expr.select().testOnly()) {
                    Operand of = operand(expr.select().operand());
                    String field = expr.select().field();
                    return of == null ? null : v -> {
                        Object map = of.get(v);
                        return map instanceof Map<?, ?> m ? m.containsKey(field) : null;
                    };
                }
                Operand field = operand(expr);
                return field == null ? null : v -> field.get(v) instanceof Boolean b ? b : null;
            }
            case CALL:
                return call(expr.call());
            default:
                return null;
        }
    }

    private static Test call(CelExpr.CelCall call) {
        if (call.target().isPresent()) {
            return null;
        }
        List<CelExpr> args = call.args();
        String f = call.function();
        if (f.equals(Operator.LOGICAL_NOT.getFunction()) && args.size() == 1) {
            Test inner = test(args.get(0));
            return inner == null ? null : v -> {
                Boolean r = inner.test(v);
                return r == null ? null : !r;
            };
        }
        if (args.size() != 2) {
            return null;
        }
        if (f.equals(Operator.LOGICAL_AND.getFunction()) || f.equals(Operator.LOGICAL_OR.getFunction())) {
            Test left = test(args.get(0));
            Test right = test(args.get(1));
            if (left == null || right == null) {
                return null;
            }
            boolean and = f.equals(Operator.LOGICAL_AND.getFunction());
            // The side that decides alone: false for &&, true for ||.
            Boolean decides = !and;
            return v -> {
                Boolean l = left.test(v);
                if (decides.equals(l)) {
                    return decides;
                }
                Boolean r = right.test(v);
                if (decides.equals(r)) {
                    return decides;
                }
                return l == null || r == null ? null : !decides;
            };
        }
        if (f.equals(Operator.IN.getFunction())) {
            Operand element = operand(args.get(0));
            List<Object> list = literals(args.get(1));
            return element == null || list == null ? null : v -> in(element.get(v), list);
        }
        Operand left = operand(args.get(0));
        Operand right = operand(args.get(1));
        if (left == null || right == null) {
            return null;
        }
        if (f.equals(Operator.EQUALS.getFunction())) {
            return v -> equal(left.get(v), right.get(v));
        }
        if (f.equals(Operator.NOT_EQUALS.getFunction())) {
            return v -> {
                Boolean r = equal(left.get(v), right.get(v));
                return r == null ? null : !r;
            };
        }
        int sign;
        boolean orEqual;
        if (f.equals(Operator.LESS.getFunction())) {
            sign = -1;
            orEqual = false;
        } else if (f.equals(Operator.LESS_EQUALS.getFunction())) {
            sign = -1;
            orEqual = true;
        } else if (f.equals(Operator.GREATER.getFunction())) {
            sign = 1;
            orEqual = false;
        } else if (f.equals(Operator.GREATER_EQUALS.getFunction())) {
            sign = 1;
            orEqual = true;
        } else {
            return null;
        }
        return v -> {
            Integer c = compareNumbers(left.get(v), right.get(v));
            return c == null ? null : c == sign || orEqual && c == 0;
        };
    }

    /** {@code value.a.b} or a string, int, double or bool literal; null for anything else. */
    private static Operand operand(CelExpr expr) {
        if (expr.getKind() == CelExpr.ExprKind.Kind.CONSTANT) {
            Object literal = literal(expr.constant());
            return literal == null ? null : v -> literal;
        }
        String[] fields = ValuePaths.fieldPath(expr);
        if (fields == null) {
            return null;
        }
        return v -> {
            Object at = v;
            for (String field : fields) {
                if (!(at instanceof Map<?, ?> map)) {
                    return MISSING;
                }
                at = map.get(field);
                if (at == null) {
                    return MISSING; // absent (a JSON null is a NullValue, not null)
                }
            }
            return at;
        };
    }

    private static Object literal(CelConstant c) {
        return switch (c.getKind()) {
            case STRING_VALUE -> c.stringValue();
            case INT64_VALUE -> c.int64Value();
            case DOUBLE_VALUE -> c.doubleValue();
            case BOOLEAN_VALUE -> c.booleanValue();
            default -> null;
        };
    }

    /** A list literal of string, int, double or bool literals; null otherwise. */
    private static List<Object> literals(CelExpr expr) {
        if (expr.getKind() != CelExpr.ExprKind.Kind.LIST || !expr.list().optionalIndices().isEmpty()) {
            return null;
        }
        List<Object> out = new ArrayList<>();
        for (CelExpr element : expr.list().elements()) {
            if (element.getKind() != CelExpr.ExprKind.Kind.CONSTANT) {
                return null;
            }
            Object literal = literal(element.constant());
            if (literal == null) {
                return null;
            }
            out.add(literal);
        }
        return out;
    }

    /** Equality of two values of one type (a double not NaN); null for any other pair. */
    private static Boolean equal(Object a, Object b) {
        if (a == MISSING || b == MISSING || a.getClass() != b.getClass()) {
            return null;
        }
        if (a instanceof String || a instanceof Long || a instanceof Boolean) {
            return a.equals(b);
        }
        if (a instanceof Double x && b instanceof Double y) {
            return Double.isNaN(x) || Double.isNaN(y) ? null : x.doubleValue() == y.doubleValue();
        }
        return null;
    }

    /** Membership where every element has the value's type; null otherwise. */
    private static Boolean in(Object value, List<Object> list) {
        if (value == MISSING) {
            return null;
        }
        boolean found = false;
        for (Object element : list) {
            Boolean eq = equal(value, element);
            if (eq == null) {
                return null;
            }
            found |= eq;
        }
        return found;
    }

    /** -1, 0 or 1 for two ints, two doubles or an int and a double exactly representable; null otherwise. */
    private static Integer compareNumbers(Object a, Object b) {
        if (a instanceof Long x && b instanceof Long y) {
            return Long.compare(x, y);
        }
        Double x = exactDouble(a);
        Double y = exactDouble(b);
        if (x == null || y == null) {
            return null;
        }
        if (Double.isNaN(x) || Double.isNaN(y)) {
            return null;
        }
        return x < y ? -1 : x > y ? 1 : 0;
    }

    /** A double, or an int a double holds exactly, as a double; null for anything else. */
    private static Double exactDouble(Object n) {
        if (n instanceof Double d) {
            return d;
        }
        return n instanceof Long l && l >= -EXACT_IN_DOUBLE && l <= EXACT_IN_DOUBLE ? (double) l : null;
    }
}
