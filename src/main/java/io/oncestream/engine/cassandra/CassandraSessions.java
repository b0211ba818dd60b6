package io.oncestream.engine.cassandra;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.auth.AuthenticationException;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;

import io.oncestream.engine.Backoff;
import io.oncestream.engine.Pause;
import io.oncestream.engine.StopRequestedException;
import io.oncestream.engine.config.JobConfig;

/** Opens the CQL session of a job's sink with the settings the engine relies on. */
public final class CassandraSessions {

    private CassandraSessions() {
    }

    /**
     * A session to the sink's cluster. Reconnection is quick (1 s, at most 5 s apart) so a
     * worker resumes soon after Cassandra comes back; start-up keeps trying until it connects,
     * silently: workers use {@link #connect}.
     *
     * @param username null for no authentication
     */
    public static CqlSession open(JobConfig.CassandraSink sink, String username, String password) {
        return builder(sink, username, password, true).build();
    }

    /**
     * A session to the sink's cluster, trying again (1 s, then at most 5 s apart) while no node
     * answers and telling {@code waiting} each failure, so that a worker reports why it is not
     * running instead of starting silently. Refused credentials are not waited out: they throw.
     *
     * @throws StopRequestedException when {@code stopRequested} becomes true before it connects
     */
    public static CqlSession connect(JobConfig.CassandraSink sink, String username, String password,
            BooleanSupplier stopRequested, Consumer<RuntimeException> waiting) {
        Backoff backoff = new Backoff(1_000, 5_000);
        while (true) {
            if (stopRequested.getAsBoolean()) {
                throw new StopRequestedException();
            }
            try {
                return builder(sink, username, password, false).build();
            } catch (AllNodesFailedException e) {
                if (e.getAllErrors().values().stream().flatMap(List::stream).anyMatch(AuthenticationException.class::isInstance)) {
                    throw e;
                }
                waiting.accept(e);
            }
            Pause.sleep(backoff.next(), stopRequested);
        }
    }

    private static CqlSessionBuilder builder(JobConfig.CassandraSink sink, String username, String password,
            boolean reconnectOnInit) {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.REQUEST_CONSISTENCY, sink.consistency())
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofSeconds(1))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(5))
                .withBoolean(DefaultDriverOption.RECONNECT_ON_INIT, reconnectOnInit)
                .withInt(DefaultDriverOption.CONNECTION_MAX_REQUESTS, 2048)
                // Every write states its own USING TIMESTAMP (WriteTimestamps), so the driver's
                // client-side timestamps would be ignored; without them the driver also does not
                // load its native clock (jnr-ffi: ~450 classes and generated code at start).
                .withString(DefaultDriverOption.TIMESTAMP_GENERATOR_CLASS, "ServerSideTimestampGenerator")
                // Closing waits for event-loop tasks that arrive within a quiet period (2 s by
                // default); a worker closes its session only when it is done with it.
                .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 0)
                // Schema metadata of the job's keyspace only (its table and dead-letter table):
                // the whole cluster's schema would be fetched at connect time, and kept. The
                // filter compares stored names, so an unquoted Shop is shop, as in CQL.
                .withStringList(DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES,
                        List.of(CqlIdentifier.fromCql(sink.keyspace()).asInternal()))
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
        return builder;
    }
}
