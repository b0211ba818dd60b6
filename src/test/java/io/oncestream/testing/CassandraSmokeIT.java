package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Proves the test database is a real Cassandra node: timestamps decide writes, data outlives a restart. */
@ExtendWith(CassandraExtension.class)
class CassandraSmokeIT {

    @Test
    void olderWriteLosesAndRowsSurviveARestart(CassandraNode cassandra) {
        String ks = cassandra.createKeyspace("smoke");
        CqlSession session = cassandra.session();
        session.execute("CREATE TABLE " + ks + ".orders (id text PRIMARY KEY, amount bigint, status text)");

        session.execute("INSERT INTO " + ks + ".orders (id, amount, status) VALUES ('o1', 200, 'PAID') USING TIMESTAMP 2000");
        // Arrives later but carries an older timestamp: Cassandra must keep the newer write.
        session.execute("INSERT INTO " + ks + ".orders (id, amount, status) VALUES ('o1', 100, 'NEW') USING TIMESTAMP 1000");
        session.execute("INSERT INTO " + ks + ".orders (id, amount, status) VALUES ('o2', 50, 'NEW') USING TIMESTAMP 1000");
        session.execute("INSERT INTO " + ks + ".orders (id, amount, status) VALUES ('o2', 75, 'PAID') USING TIMESTAMP 3000");

        assertThat(read(session, ks)).containsExactlyInAnyOrder("o1 200 PAID 2000", "o2 75 PAID 3000");

        cassandra.restart();

        try (CqlSession fresh = cassandra.newSession()) {
            assertThat(read(fresh, ks)).containsExactlyInAnyOrder("o1 200 PAID 2000", "o2 75 PAID 3000");
        }
    }

    private static List<String> read(CqlSession session, String ks) {
        return session.execute("SELECT id, amount, status, WRITETIME(status) AS wt FROM " + ks + ".orders").all().stream()
                .map(CassandraSmokeIT::describe).toList();
    }

    private static String describe(Row row) {
        return row.getString("id") + " " + row.getLong("amount") + " " + row.getString("status") + " " + row.getLong("wt");
    }
}
