package io.oncestream.e2e;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalNode;
import io.oncestream.testing.NodeExtension;
import io.oncestream.testing.OperatorRelease;

/**
 * What every end-to-end test class stands on: the test run's Kafka, Cassandra, control plane
 * and node (started once per run), and the operator installed for the class with the Helm
 * chart, as a pod on the node with this build's image and the chart's RBAC. After the class,
 * its jobs' namespaces are deleted and the operator is uninstalled.
 */
@ExtendWith({KubeExtension.class, KafkaExtension.class, CassandraExtension.class, NodeExtension.class})
abstract class E2ETest {

    static KubeCluster kube;
    static KafkaBroker kafka;
    static CassandraNode cassandra;
    static LocalNode node;
    static OperatorRelease operator;

    @BeforeAll
    static void installOperator(KubeCluster cluster, KafkaBroker broker, CassandraNode cassandraNode, LocalNode localNode) {
        kube = cluster;
        kafka = broker;
        cassandra = cassandraNode;
        node = localNode;
        operator = OperatorRelease.install(kube, node, "e2e", E2ESettings.OPERATOR, E2ESettings.WAIT);
    }

    /**
     * The random source of a test that picks fault moments at random: seeded from
     * {@code -Doncestream.e2e.seed} when given, else afresh, and the seed printed so that a run
     * can be replayed.
     */
    static java.util.Random seededRandom(String test) {
        long seed = Long.getLong("oncestream.e2e.seed", System.nanoTime());
        System.out.println("[e2e] " + test + " random seed " + seed + " (replay with -Doncestream.e2e.seed=" + seed + ")");
        return new java.util.Random(seed);
    }

    @AfterAll
    static void deleteJobsAndUninstallOperator() {
        E2EJob.deleteAll(kube);
        if (operator != null) {
            operator.uninstall(E2ESettings.WAIT);
            operator = null;
        }
    }
}
