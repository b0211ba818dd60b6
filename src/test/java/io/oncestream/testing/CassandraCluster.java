package io.oncestream.testing;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;

/**
 * A real 3-node Cassandra cluster of {@code deploy/local/cassandra-cluster.sh}, each node on its
 * own address in the stack's namespace, for one test class: {@link #start()} deletes what an
 * earlier run left and starts the nodes; {@link #close()} stops them and deletes their data.
 * Nodes stop and start one at a time for the fault tests.
 */
public final class CassandraCluster implements AutoCloseable {

    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(10);

    private final Path repo = LocalService.repoDir();
    private final Map<String, String> settings = LocalService.testSettings(repo);
    private final List<InetSocketAddress> nodes = new ArrayList<>();
    private final String datacenter;
    private final Duration startTime;

    private CassandraCluster() {
        run("clean");
        long started = System.nanoTime();
        run("start");
        startTime = Duration.ofNanos(System.nanoTime() - started);
        Map<String, String> env = env();
        datacenter = env.get("CASSANDRA_DATACENTER");
        for (int n = 1; env.containsKey("CASSANDRA_NODE_" + n); n++) {
            String[] hostPort = env.get("CASSANDRA_NODE_" + n).split(":");
            nodes.add(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])));
        }
    }

    /** Starts a new cluster (its data from any earlier run deleted) and waits until every node accepts CQL clients. */
    public static CassandraCluster start() {
        return new CassandraCluster();
    }

    /** How long {@link #start()} took to have every node up. */
    public Duration startTime() {
        return startTime;
    }

    /** {@code host:port} of every node's CQL listener, node 1 first. */
    public List<InetSocketAddress> nodes() {
        return List.copyOf(nodes);
    }

    /** {@code host:port} of node {@code n} (1-based). */
    public InetSocketAddress node(int n) {
        return nodes.get(n - 1);
    }

    public String datacenter() {
        return datacenter;
    }

    /** A session to the nodes given (1-based; all when none), which the caller closes. */
    public CqlSession newSession(int... only) {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(500))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2))
                .build();
        var builder = CqlSession.builder().withLocalDatacenter(datacenter).withConfigLoader(config);
        if (only.length == 0) {
            builder.addContactPoints(nodes);
        } else {
            for (int n : only) {
                builder.addContactPoint(node(n));
            }
        }
        return builder.build();
    }

    /** Stops node {@code n} (SIGTERM: it drains, and the others see it leave) and keeps its data. */
    public void stopNode(int n) {
        run("stop-node", String.valueOf(n));
    }

    /** Starts node {@code n} on its data and waits until it accepts CQL clients. */
    public void startNode(int n) {
        run("start-node", String.valueOf(n));
    }

    /**
     * Hint files node {@code n} holds for other nodes, from its {@code system_views.pending_hints}
     * (a node-local table: the query goes to node {@code n} through {@code session}).
     */
    public int pendingHintFiles(CqlSession session, int n) {
        Node target = session.getMetadata().getNodes().values().stream()
                .filter(node -> node.getEndPoint().resolve() instanceof InetSocketAddress a
                        && a.getHostString().equals(node(n).getHostString()))
                .findFirst().orElseThrow(() -> new IllegalStateException("the session does not know node " + n));
        int files = 0;
        for (Row row : session.execute(SimpleStatement.newInstance("SELECT files FROM system_views.pending_hints").setNode(target))) {
            files += row.getInt("files");
        }
        return files;
    }

    /** Stops every node and deletes the cluster's data. */
    @Override
    public void close() {
        run("clean");
    }

    private Map<String, String> env() {
        return LocalService.settingLines(run("env"));
    }

    private String run(String... args) {
        List<String> argv = new ArrayList<>(List.of("bash", repo.resolve("deploy/local/cassandra-cluster.sh").toString()));
        argv.addAll(List.of(args));
        Command.Result result = new Command(argv).directory(repo).env(settings).run(SCRIPT_TIMEOUT);
        if (!result.stderr().isBlank()) {
            System.out.print(result.stderr());
        }
        return result.orThrow().stdout();
    }
}
