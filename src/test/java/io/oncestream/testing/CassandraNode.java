package io.oncestream.testing;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;

/** The test run's real Cassandra node, with a shared CQL session and helpers for keyspaces. */
public final class CassandraNode implements AutoCloseable {

    private final LocalService service;
    private final InetSocketAddress contactPoint;
    private final String datacenter;
    private CqlSession session;
    private final List<CqlSession> replaced = new ArrayList<>();

    CassandraNode(LocalService service) {
        this.service = service;
        Map<String, String> env = service.env();
        String[] hostPort = env.get("CASSANDRA_CONTACT_POINT").split(":");
        this.contactPoint = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
        this.datacenter = env.get("CASSANDRA_DATACENTER");
    }

    public InetSocketAddress contactPoint() {
        return contactPoint;
    }

    public String datacenter() {
        return datacenter;
    }

    /** A session shared by the tests; do not close it. */
    public synchronized CqlSession session() {
        if (session == null || session.isClosed()) {
            session = newSession();
        }
        return session;
    }

    /** A new session that the caller owns and closes. */
    public CqlSession newSession() {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(500))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2))
                .build();
        return CqlSession.builder().addContactPoint(contactPoint).withLocalDatacenter(datacenter)
                .withConfigLoader(config).build();
    }

    /** Creates a keyspace named {@code prefix_<random>} (replication factor 1) and returns its name. */
    public String createKeyspace(String prefix) {
        String name = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        session().execute("CREATE KEYSPACE " + name
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        return name;
    }

    /** Stops the node (SIGTERM, Cassandra drains) and keeps its data. */
    public void stop() {
        service.stop();
    }

    /** A file of the node's log directory ({@code system.log}, {@code system.log.1} of the run before the last restart). */
    public java.nio.file.Path logFile(String name) {
        return service.dataDir().resolve("logs").resolve(name);
    }

    /** Starts the node and waits until the shared session can query it again. */
    public void start() {
        service.start();
        awaitSessionReconnected();
    }

    /** Stops and starts the node on the same data. */
    public void restart() {
        service.restart();
        awaitSessionReconnected();
    }

    /**
     * A new shared session once the node answers: a session that saw the node go away can keep
     * a dead control connection (then every schema change times out, as four ITs once did after
     * EngineOutageIT's restarts). The old session stays open for whoever holds it.
     */
    private void awaitSessionReconnected() {
        synchronized (this) {
            if (session == null) {
                return;
            }
            replaced.add(session);
            session = null;
        }
        Awaits.until(Duration.ofSeconds(60), "a new shared CQL session to the restarted node", () -> {
            try {
                session().execute("SELECT release_version FROM system.local");
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
    }

    @Override
    public synchronized void close() {
        if (session != null) {
            session.close();
        }
        replaced.forEach(CqlSession::close);
    }
}
