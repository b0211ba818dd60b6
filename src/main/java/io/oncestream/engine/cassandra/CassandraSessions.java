package io.oncestream.engine.cassandra;

import java.net.InetSocketAddress;
import java.time.Duration;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;

import io.oncestream.engine.config.JobConfig;

/** Opens the CQL session of a job's sink with the settings the engine relies on. */
public final class CassandraSessions {

    private CassandraSessions() {
    }

    /**
     * A session to the sink's cluster. Reconnection is quick (1 s, at most 5 s apart) so a
     * worker resumes soon after Cassandra comes back; start-up keeps trying until it connects.
     *
     * @param username null for no authentication
     */
    public static CqlSession open(JobConfig.CassandraSink sink, String username, String password) {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.REQUEST_CONSISTENCY, sink.consistency())
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofSeconds(1))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(5))
                .withBoolean(DefaultDriverOption.RECONNECT_ON_INIT, true)
                .withInt(DefaultDriverOption.CONNECTION_MAX_REQUESTS, 2048)
                .build();
        CqlSessionBuilder builder = CqlSession.builder()
                .withLocalDatacenter(sink.localDatacenter())
                .withConfigLoader(config);
        for (String contactPoint : sink.contactPoints()) {
            int colon = contactPoint.lastIndexOf(':');
            builder.addContactPoint(InetSocketAddress.createUnresolved(contactPoint.substring(0, colon),
                    Integer.parseInt(contactPoint.substring(colon + 1))));
        }
        if (username != null) {
            builder.withAuthCredentials(username, password);
        }
        return builder.build();
    }
}
