package io.oncestream.bench.engine;

import java.util.Random;

/**
 * The benchmark's records, orders of about 160 bytes of JSON, and the job's filter and columns
 * over them. Unless a mode asks for some to fail the filter ({@code --passing}), every order
 * passes, so rows = records.
 */
final class BenchOrders {

    /** The benchmark job's filter and columns. */
    static final String FILTER = "value.status == 'PAID' && value.amount > 100.0";
    static final String COLUMNS =
            "{\"customer\": \"value.customer\", \"order_id\": \"value.id\", \"amount\": \"value.amount\", \"seq\": \"value.seq\"}";

    private BenchOrders() {
    }

    static String json(Random random, long seq) {
        return json(random, seq, true);
    }

    /**
     * An order that passes the benchmark's filter ({@code status == 'PAID' && amount > 100.0})
     * or, half and half, fails it by its status or by its amount.
     */
    static String json(Random random, long seq, boolean passes) {
        boolean paid = passes || random.nextBoolean();
        double amount = passes || !paid ? 101 + random.nextInt(9000) / 100.0 : 1 + random.nextInt(9900) / 100.0;
        return "{\"id\": \"ord-" + seq + "\", \"status\": \"" + (paid ? "PAID" : "PENDING") + "\", \"amount\": " + amount
                + ", \"customer\": \"cust-" + random.nextInt(2000) + "\", \"seq\": " + seq
                + ", \"note\": \"benchmark order with a little padding to reach about 150 bytes\"}";
    }

    /** Whether the order passes the benchmark's filter, decided the raw loader's way. */
    static boolean passes(String json) {
        return json.contains("\"status\": \"PAID\"") && Double.parseDouble(field(json, "amount")) > 100.0;
    }

    /** {customer, id, amount, seq} without a JSON library: the raw loader's own parsing. */
    static String[] parse(String json) {
        return new String[] {field(json, "customer"), field(json, "id"), field(json, "amount"), field(json, "seq")};
    }

    private static String field(String json, String name) {
        int i = json.indexOf("\"" + name + "\": ") + name.length() + 4;
        int end = json.charAt(i) == '"' ? json.indexOf('"', i + 1) + 1 : json.indexOf(',', i);
        return json.substring(i, end).replace("\"", "");
    }
}
