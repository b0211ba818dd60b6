package io.oncestream.engine.config;

/** A complete worker configuration for tests, with placeholders to fill. */
public final class TestConfigs {

    private TestConfigs() {
    }

    /** JSON of a job reading {@code topic} into {@code keyspace.table} with the usual order columns. */
    public static String orders(String jobId, String bootstrap, String topic, String contactPoint, String datacenter,
            String keyspace, String table) {
        return """
                {
                  "jobId": "%s",
                  "source": {"bootstrapServers": "%s", "topics": ["%s"], "maxRecordsPerBatch": 500},
                  "format": "json",
                  "filter": "value.status == 'PAID' && value.amount > 100",
                  "sink": {
                    "contactPoints": ["%s"], "localDatacenter": "%s", "keyspace": "%s", "table": "%s",
                    "consistency": "ONE",
                    "columns": {"order_id": "value.id", "amount": "value.amount", "customer": "value.customer.name",
                                "seq": "value.seq"}
                  },
                  "deadLetter": {"mode": "table", "table": "%s_dead_letters"},
                  "trigger": {"intervalMs": 200}
                }
                """.formatted(jobId, bootstrap, topic, contactPoint, datacenter, keyspace, table, table);
    }
}
