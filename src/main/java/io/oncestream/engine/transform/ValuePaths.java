package io.oncestream.engine.transform;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

import dev.cel.common.ast.CelExpr;

/**
 * The parts of a record's {@code value} that a job's expressions can read, found in their
 * syntax trees: {@code value.status == 'PAID' && value.amount > 100.0} reads the fields
 * {@code status} and {@code amount}, and nothing else of the document needs to be built. A
 * field path is kept whole from the last field an expression names ({@code value.items.size()}
 * keeps all of {@code items}); {@code value} used any other way (as a whole, indexed, iterated,
 * or a macro variable named {@code value}) keeps the whole document.
 */
final class ValuePaths {

    /** A field of the document: kept whole, or only the named children. */
    static final class Node {
        private boolean whole;
        private final Map<String, Node> children = new HashMap<>();

        boolean whole() {
            return whole;
        }

        /** The child to keep, or null when the field is not read (it is skipped). */
        Node child(String name) {
            return children.get(name);
        }
    }

    private static final String VALUE = "value";

    private final Node root = new Node();

    /** What the document parser needs to keep: null for all of it. */
    Node keep() {
        return root.whole ? null : root;
    }

    /** Adds what {@code expr} reads of {@code value}. */
    void add(CelExpr expr) {
        switch (expr.getKind()) {
            case IDENT:
                if (VALUE.equals(expr.ident().name())) {
                    root.whole = true;
                }
                break;
            case SELECT:
                select(expr);
                break;
            case CALL:
                expr.call().target().ifPresent(this::add);
                expr.call().args().forEach(this::add);
                break;
            case LIST:
                expr.list().elements().forEach(this::add);
                break;
            case MAP:
                expr.map().entries().forEach(e -> {
                    add(e.key());
                    add(e.value());
                });
                break;
            case STRUCT:
                expr.struct().entries().forEach(e -> add(e.value()));
                break;
            case COMPREHENSION:
                CelExpr.CelComprehension c = expr.comprehension();
                if (VALUE.equals(c.iterVar()) || VALUE.equals(c.iterVar2()) || VALUE.equals(c.accuVar())) {
                    root.whole = true; // a variable that hides the record's value: keep it simple and safe
                }
                add(c.iterRange());
                add(c.accuInit());
                add(c.loopCondition());
                add(c.loopStep());
                add(c.result());
                break;
            default:
                break; // constants
        }
    }

    /** {@code value.a.b}: the path a.b kept whole; a select on anything else: its operand walked. */
    private void select(CelExpr expr) {
        ArrayDeque<String> fields = new ArrayDeque<>();
        CelExpr operand = expr;
        while (operand.getKind() == CelExpr.ExprKind.Kind.SELECT) {
            fields.addFirst(operand.select().field());
            operand = operand.select().operand();
        }
        if (operand.getKind() == CelExpr.ExprKind.Kind.IDENT && VALUE.equals(operand.ident().name())) {
            keepWhole(fields.toArray(String[]::new));
        } else {
            add(operand);
        }
    }

    /**
     * The fields of {@code value.a.b} ({@code [a, b]}; {@code []} for {@code value} itself), or
     * null if {@code expr} is not such a selection (a {@code has()} test, another variable).
     */
    static String[] fieldPath(CelExpr expr) {
        ArrayDeque<String> fields = new ArrayDeque<>();
        CelExpr e = expr;
        while (e.getKind() == CelExpr.ExprKind.Kind.SELECT && !e.select().testOnly()) {
            fields.addFirst(e.select().field());
            e = e.select().operand();
        }
        boolean onValue = e.getKind() == CelExpr.ExprKind.Kind.IDENT && VALUE.equals(e.ident().name());
        return onValue ? fields.toArray(String[]::new) : null;
    }

    /** Keeps the field at {@code path} (below {@code value}) and all of it. */
    void keepWhole(String[] path) {
        Node node = root;
        for (String field : path) {
            if (node.whole) {
                return;
            }
            node = node.children.computeIfAbsent(field, f -> new Node());
        }
        node.whole = true;
        node.children.clear();
    }
}
