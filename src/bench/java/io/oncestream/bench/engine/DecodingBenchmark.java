package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.transform.RecordTransformer;
import io.oncestream.engine.transform.SourceRecord;
import io.oncestream.engine.transform.TransformResult;

/**
 * Filter and map on one thread, CPU only, each variant side by side with the path it replaced:
 * JSON decoded only where the job's expressions read it or whole, and the filter answered from
 * the decoded fields or by CEL's interpreter. Alone ({@code --decoding-only N}, no services) or
 * as part of the throughput mode's results.
 */
final class DecodingBenchmark {

    private DecodingBenchmark() {
    }

    /** {@code --decoding-only count}: the three comparisons on {@code count} of the benchmark's orders. */
    static void alone(int count) {
        Random random = new Random(7);
        List<String> values = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            values.add(BenchOrders.json(random, i));
        }
        print(decodingRatio(values), decodingRatio(richer(values)), filterRatio(values));
    }

    /** The benchmark job's filter and columns, compiled as a worker compiles them. */
    private static RecordTransformer transformer() {
        return RecordTransformer.compile(JobConfigs.parse("""
                {"jobId": "bench/decoding", "source": {"bootstrapServers": "unused:9092", "topics": ["orders"]},
                 "filter": "%s", "sink": {"contactPoints": ["unused:9042"], "localDatacenter": "dc", "keyspace": "k",
                 "table": "t", "columns": %s}}
                """.formatted(BenchOrders.FILTER, BenchOrders.COLUMNS)));
    }

    /**
     * The job's filter and columns over every record on one thread, CPU only, alternating
     * between decoding only the fields the expressions read and decoding whole values;
     * returns the best records/s of each.
     */
    static double[] decodingRatio(List<String> values) {
        RecordTransformer pruned = transformer();
        double[] rates = transformRates(values, pruned, pruned.decodingWholeValues());
        log("filter and columns on one thread, %d-byte records: %,.0f records/s decoding the fields read, %,.0f decoding whole values",
                values.get(0).length(), rates[0], rates[1]);
        return rates;
    }

    /**
     * The job's filter and columns over every record on one thread, CPU only, alternating between
     * its filter answered from the decoded fields where it can be and its filter always evaluated
     * by CEL's interpreter; returns the best records/s of each.
     */
    static double[] filterRatio(List<String> values) {
        RecordTransformer fields = transformer();
        double[] rates = transformRates(values, fields, fields.filteringWithCelOnly());
        log("filter and columns on one thread, %d-byte records: %,.0f records/s with the filter answered from the fields,"
                + " %,.0f with CEL evaluating it", values.get(0).length(), rates[0], rates[1]);
        return rates;
    }

    /** Best records/s of {@code a} and of {@code b} over five alternating rounds, and the record size. */
    private static double[] transformRates(List<String> values, RecordTransformer a, RecordTransformer b) {
        List<SourceRecord> input = new ArrayList<>(values.size());
        for (int i = 0; i < values.size(); i++) {
            input.add(new SourceRecord("orders", 0, i, 0, null, values.get(i).getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));
        }
        double bestA = 0;
        double bestB = 0;
        for (int round = 0; round < 5; round++) { // the first rounds warm the JIT up for both
            bestA = Math.max(bestA, transformRate(a, input));
            bestB = Math.max(bestB, transformRate(b, input));
        }
        return new double[] {bestA, bestB, values.get(0).length()};
    }

    /** The results lines: the filter's two paths, then decoding on flat and on richer records. */
    static void print(double[] flat, double[] rich, double[] filter) {
        System.out.printf("  filter+map, filter from fields / CEL : %.2f on the benchmark's %.0f-byte records (%,.0f vs %,.0f records/s;"
                + " the filter %s answered from the decoded fields, or by CEL's interpreter); one thread%n",
                filter[0] / filter[1], filter[2], filter[0], filter[1], BenchOrders.FILTER);
        System.out.printf("  filter+map, fields read / all     : %.2f on the benchmark's %.0f-byte records (%,.0f vs %,.0f records/s),"
                + " %.2f on %.0f-byte records with nested fields no expression reads (%,.0f vs %,.0f); one thread%n",
                flat[0] / flat[1], flat[2], flat[0], flat[1], rich[0] / rich[1], rich[2], rich[0], rich[1]);
    }

    /** The same records with what orders usually carry besides: customer details, items, a shipping address. */
    static List<String> richer(List<String> values) {
        String more = ", \"customerDetails\": {\"name\": \"Ada Lovelace\", \"email\": \"ada@example.com\", \"tier\": \"gold\"},"
                + " \"items\": [{\"sku\": \"A-1\", \"qty\": 2, \"price\": 9.5}, {\"sku\": \"B-2\", \"qty\": 1, \"price\": 20.0}],"
                + " \"shipping\": {\"country\": \"DE\", \"city\": \"Berlin\", \"street\": \"Unter den Linden 1\", \"zip\": \"10117\"}}";
        return values.stream().map(v -> v.substring(0, v.lastIndexOf('}')) + more).toList();
    }

    private static double transformRate(RecordTransformer transformer, List<SourceRecord> input) {
        long start = System.nanoTime();
        int rows = 0;
        for (SourceRecord record : input) {
            if (transformer.apply(record) instanceof TransformResult.Row) {
                rows++;
            }
        }
        if (rows != input.size()) {
            throw new IllegalStateException(rows + " rows of " + input.size() + " records: every benchmark record passes");
        }
        return input.size() / ((System.nanoTime() - start) / 1e9);
    }
}
