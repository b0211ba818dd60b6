package io.oncestream.engine.cassandra;

import java.time.Duration;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.schema.TableMetadata;

import io.oncestream.engine.config.InvalidConfigException;

/** Looking up the sink table and creating the dead-letter table. */
final class SinkTables {

    private SinkTables() {
    }

    /** The table's metadata, or an error naming {@code field} and what is missing. */
    static TableMetadata require(CqlSession session, String keyspace, String table, String field) {
        var ks = session.getMetadata().getKeyspace(CqlIdentifier.fromCql(keyspace)).orElseThrow(() ->
                new InvalidConfigException("sink.keyspace", "keyspace " + keyspace + " does not exist"));
        return ks.getTable(CqlIdentifier.fromCql(table)).orElseThrow(() ->
                new InvalidConfigException(field, "table " + keyspace + "." + table + " does not exist"));
    }

    /**
     * Creates the dead-letter table if missing and returns its insert statement. One row per
     * bad record, keyed by (topic, partition, offset), so a replay rewrites the same row.
     */
    static String deadLetterInsert(CqlSession session, String keyspace, String table) {
        String name = CqlIdentifier.fromCql(keyspace).asCql(true) + "." + CqlIdentifier.fromCql(table).asCql(true);
        session.execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance(
                "CREATE TABLE IF NOT EXISTS " + name + " ("
                        + "kafka_topic text, kafka_partition int, kafka_offset bigint, "
                        + "record_key blob, record_value blob, record_timestamp timestamp, error text, batch_id bigint, "
                        + "PRIMARY KEY ((kafka_topic, kafka_partition), kafka_offset))")
                .setTimeout(Duration.ofSeconds(60)));
        session.checkSchemaAgreement();
        // Another worker of the job may have created the table a moment ago: "IF NOT EXISTS"
        // then changes nothing and this session's metadata may not know the table yet.
        session.refreshSchema();
        TableMetadata t = require(session, keyspace, table, "deadLetter.table");
        for (String column : new String[] {"kafka_topic", "kafka_partition", "kafka_offset", "record_key", "record_value",
                "record_timestamp", "error", "batch_id"}) {
            if (t.getColumn(column).isEmpty()) {
                throw new InvalidConfigException("deadLetter.table", "table " + name + " exists but has no column " + column
                        + "; drop it or name another dead-letter table");
            }
        }
        return "INSERT INTO " + name + " (kafka_topic, kafka_partition, kafka_offset, record_key, record_value, "
                + "record_timestamp, error, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?";
    }
}
