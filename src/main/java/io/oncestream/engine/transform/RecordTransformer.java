package io.oncestream.engine.transform;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.core.JsonParseException;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.CelType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.values.NullValue;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import dev.cel.runtime.CelRuntimeLibrary;
import dev.cel.runtime.CelVariableResolver;
import io.oncestream.contract.RecordFormat;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;

/**
 * The job's CEL filter and column expressions, compiled once. Expressions see:
 * <ul>
 * <li>{@code value}: the record value, decoded as JSON (objects, lists, strings, {@code int}
 *     for integral numbers, {@code double} otherwise, {@code null}) or as a UTF-8 string</li>
 * <li>{@code key}: the record key as a UTF-8 string, or {@code null}</li>
 * <li>{@code headers}: {@code map(string, string)}</li>
 * <li>{@code topic} (string), {@code partition}, {@code offset}, {@code timestamp} (int, ms since the epoch)</li>
 * </ul>
 * Numbers compare across int and double ({@code value.amount > 100} works for 150.5 too).
 * The language is CEL with its standard macros ({@code has}, {@code all}, {@code exists},
 * {@code exists_one}, {@code map}, {@code filter}) and the string, math, list, set and regex
 * extensions, here for the worker and the operator's spec check alike.
 * Evaluation is deterministic: the same record always gives the same row. A filter of the most
 * common shape (fields compared with literals, joined by {@code &&}, {@code ||}, {@code !}) is
 * answered from the decoded fields by {@link FieldFilter} wherever the answer is certain, and by
 * CEL otherwise, with the same result either way.
 */
public final class RecordTransformer {

    private static final CelOptions OPTIONS = CelOptions.current()
            .enableHeterogeneousNumericComparisons(true)
            .build();
    /** The extension libraries, each both a compiler and a runtime library. */
    private static final List<Object> EXTENSIONS = List.of(CelExtensions.strings(), CelExtensions.math(OPTIONS),
            CelExtensions.lists(), CelExtensions.sets(OPTIONS), CelExtensions.regex());

    private final RecordFormat format;
    private final CelRuntime.Program filter;
    /** The filter answered without CEL where certain (null: every record goes to CEL). */
    private final FieldFilter fieldFilter;
    private final Map<String, CelRuntime.Program> columns;
    private final Map<String, String[]> fieldPaths;
    /** The fields of a JSON value the expressions can read (null: all); the rest is skipped when decoding. */
    private final ValuePaths.Node keep;

    private RecordTransformer(RecordFormat format, CelRuntime.Program filter, FieldFilter fieldFilter,
            Map<String, CelRuntime.Program> columns, Map<String, String[]> fieldPaths, ValuePaths.Node keep) {
        this.format = format;
        this.filter = filter;
        this.fieldFilter = fieldFilter;
        this.columns = columns;
        this.fieldPaths = fieldPaths;
        this.keep = keep;
    }

    /** What a JSON value is decoded to (null: all of it). */
    ValuePaths.Node keep() {
        return keep;
    }

    /** This transformer decoding every field of each value, as if the expressions read all of it: for comparisons. */
    public RecordTransformer decodingWholeValues() {
        return new RecordTransformer(format, filter, fieldFilter, columns, fieldPaths, null);
    }

    /** This transformer with every filter evaluated by CEL's interpreter: for comparisons. */
    public RecordTransformer filteringWithCelOnly() {
        return new RecordTransformer(format, filter, null, columns, fieldPaths, keep);
    }

    /** The filter answered without CEL where certain, or null. */
    FieldFilter fieldFilter() {
        return fieldFilter;
    }

    /** Compiles the filter and columns of {@code config}; an error names the field, e.g. {@code sink.columns.amount}. */
    public static RecordTransformer compile(JobConfig config) {
        ValuePaths read = new ValuePaths();
        boolean json = config.format() == RecordFormat.JSON;
        CelRuntime.Program filter = null;
        FieldFilter fieldFilter = null;
        if (config.filter() != null && !config.filter().isBlank()) {
            Compiled f = compile(Environment.FILTER, config.filter(), "filter");
            read.add(f.expr());
            filter = f.program();
            fieldFilter = json ? FieldFilter.of(f.expr()) : null;
        }
        Map<String, CelRuntime.Program> columns = new LinkedHashMap<>();
        // Plain field selections (value.a.b) are the common case; they are evaluated by walking
        // the decoded maps, with the same result and the same errors as CEL, at a fraction of the cost.
        Map<String, String[]> fieldPaths = new LinkedHashMap<>();
        config.sink().columns().forEach((column, expression) -> {
            Compiled c = compile(Environment.COLUMNS, expression, "sink.columns." + column);
            read.add(c.expr());
            columns.put(column, c.program());
            String[] path = json ? ValuePaths.fieldPath(c.expr()) : null;
            if (path != null && path.length > 0) {
                fieldPaths.put(column, path);
            }
        });
        return new RecordTransformer(config.format(), filter, fieldFilter, columns, fieldPaths, read.keep());
    }

    /**
     * The CEL environment, built on first use and then shared: CEL's compilers and runtime are
     * immutable and safe to use from several threads. Built again for each job, they were a
     * share of every compile's cost (the operator checks every job's: measured warm, 0.72-0.93x
     * the CPU per job once shared).
     */
    private static final class Environment {
        static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().setOptions(OPTIONS)
                .addLibraries(EXTENSIONS.stream().map(CelRuntimeLibrary.class::cast).toList())
                .build();
        static final CelCompiler FILTER = compiler(SimpleType.BOOL);
        static final CelCompiler COLUMNS = compiler(SimpleType.DYN);
    }

    private static CelCompiler compiler(CelType resultType) {
        return CelCompilerFactory.standardCelCompilerBuilder()
                .setOptions(OPTIONS)
                .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addLibraries(EXTENSIONS.stream().map(CelCompilerLibrary.class::cast).toList())
                .addVar("value", SimpleType.DYN)
                .addVar("key", SimpleType.DYN)
                .addVar("headers", MapType.create(SimpleType.STRING, SimpleType.STRING))
                .addVar("topic", SimpleType.STRING)
                .addVar("partition", SimpleType.INT)
                .addVar("offset", SimpleType.INT)
                .addVar("timestamp", SimpleType.INT)
                .setResultType(resultType)
                .build();
    }

    /** An expression's checked syntax tree and its program. */
    private record Compiled(CelExpr expr, CelRuntime.Program program) {
    }

    private static Compiled compile(CelCompiler compiler, String expression, String field) {
        try {
            CelAbstractSyntaxTree ast = compiler.compile(expression).getAst();
            return new Compiled(ast.getExpr(), Environment.RUNTIME.createProgram(ast));
        } catch (CelValidationException e) {
            throw new InvalidConfigException(field, "CEL expression does not compile: " + e.getMessage());
        } catch (Exception e) {
            throw new InvalidConfigException(field, "CEL expression cannot be prepared: " + e.getMessage());
        }
    }

    /**
     * The values of {@code keyColumns} only, the filter skipped: what a tombstone's delete needs
     * (its value is null, so the key columns should map from {@code key}). A column that fails,
     * or is not a column of the job, makes it {@link TransformResult.Bad}.
     */
    public TransformResult keyOf(SourceRecord record, List<String> keyColumns) {
        CelVariableResolver vars = variables(record, NullValue.NULL_VALUE);
        Map<String, Object> out = new LinkedHashMap<>();
        for (String column : keyColumns) {
            CelRuntime.Program program = columns.get(column);
            if (program == null) {
                return new TransformResult.Bad("primary-key column " + column + " has no expression");
            }
            try {
                Object v = program.eval(vars);
                out.put(column, v instanceof NullValue ? null : v);
            } catch (CelEvaluationException e) {
                return new TransformResult.Bad("sink.columns." + column + ": evaluation error on a tombstone: " + e.getMessage());
            }
        }
        return new TransformResult.Row(out);
    }

    /**
     * The variables an expression sees, looked up when it reads them: evaluating with a map
     * would copy it into an immutable one per evaluation, and decode the key whether read or not.
     * Every value is already of a CEL type (strings, {@code long}, maps of strings, decoded JSON).
     */
    private static CelVariableResolver variables(SourceRecord record, Object value) {
        return name -> switch (name) {
            case "value" -> Optional.of(value);
            case "key" -> Optional.of(record.key() == null ? NullValue.NULL_VALUE : new String(record.key(), StandardCharsets.UTF_8));
            case "headers" -> Optional.of(record.headers());
            case "topic" -> Optional.of(record.topic());
            case "partition" -> Optional.of((long) record.partition());
            case "offset" -> Optional.of(record.offset());
            case "timestamp" -> Optional.of(record.timestampMs());
            default -> Optional.empty();
        };
    }

    /** Applies the filter, then the columns. Never throws for a bad record: it returns {@link TransformResult.Bad}. */
    public TransformResult apply(SourceRecord record) {
        Object value;
        try {
            value = decode(record.value());
        } catch (JsonParseException e) {
            return new TransformResult.Bad("value is not valid JSON: " + e.getOriginalMessage());
        } catch (Exception e) {
            return new TransformResult.Bad("value cannot be decoded: " + e.getMessage());
        }
        Boolean passes = fieldFilter == null ? null : fieldFilter.test(value);
        if (Boolean.FALSE.equals(passes)) {
            return new TransformResult.Filtered();
        }
        CelVariableResolver vars = variables(record, value);
        if (filter != null && passes == null) {
            try {
                if (!Boolean.TRUE.equals(filter.eval(vars))) {
                    return new TransformResult.Filtered();
                }
            } catch (CelEvaluationException e) {
                return new TransformResult.Bad("filter: " + e.getMessage());
            }
        }
        Map<String, Object> row = new LinkedHashMap<>();
        for (Map.Entry<String, CelRuntime.Program> column : columns.entrySet()) {
            String[] path = fieldPaths.get(column.getKey());
            if (path != null) {
                Object v = value;
                for (String field : path) {
                    if (!(v instanceof Map<?, ?> map) || !map.containsKey(field)) {
                        return new TransformResult.Bad("sink.columns." + column.getKey() + ": "
                                + (v instanceof Map ? "no such key: " + field : "cannot select field '" + field + "' from "
                                + (v instanceof NullValue ? "null" : v.getClass().getSimpleName())));
                    }
                    v = map.get(field);
                }
                row.put(column.getKey(), v instanceof NullValue ? null : v);
                continue;
            }
            try {
                Object v = column.getValue().eval(vars);
                row.put(column.getKey(), v instanceof NullValue ? null : v);
            } catch (CelEvaluationException e) {
                return new TransformResult.Bad("sink.columns." + column.getKey() + ": " + e.getMessage());
            }
        }
        return new TransformResult.Row(row);
    }

    private Object decode(byte[] bytes) throws Exception {
        if (bytes == null) {
            return NullValue.NULL_VALUE;
        }
        if (format == RecordFormat.STRING) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        return CelJson.parse(bytes, keep);
    }
}
