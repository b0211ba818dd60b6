package io.oncestream.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import io.oncestream.testing.TextEdits;

/** A small valid StreamJob manifest for tests, with textual edits. */
public final class TestManifests {

    private static final String VALID = """
            apiVersion: oncestream.io/v1alpha1
            kind: StreamJob
            metadata: {name: NAME, namespace: NS}
            spec:
              source:
                kafka: {bootstrapServers: "kafka:9092", topics: [orders]}
              filter: "value.status == 'PAID'"
              sink:
                cassandra:
                  contactPoints: ["cassandra:9042"]
                  localDatacenter: dc1
                  keyspace: shop
                  table: paid_orders
                  columns: {order_id: value.id, amount: value.amount}
            """;

    private TestManifests() {
    }

    /** The manifest named {@code name} in {@code namespace}, each key of {@code edits} replaced by its value (it must occur). */
    public static String streamJob(String name, String namespace, Map<String, String> edits) {
        return TextEdits.apply(VALID.replace("NAME", name).replace("NS", namespace), edits);
    }
}
