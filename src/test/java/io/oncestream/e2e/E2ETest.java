package io.oncestream.e2e;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

import io.oncestream.testing.CassandraExtension;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.KafkaExtension;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.KubeExtension;
import io.oncestream.testing.LocalNode;
import io.oncestream.testing.NodeExtension;
import io.oncestream.testing.OperatorInstall;
import io.oncestream.testing.OperatorProcess;

/**
 * What every end-to-end test class stands on: the test run's Kafka, Cassandra, control plane
 * and node (started once per run), and the operator installed with the committed CRD and RBAC
 * and running as its ServiceAccount for the class. After the class, its jobs' namespaces are
 * deleted and the operator stops; its log is in {@code target/e2e/<class>/}.
 */
@ExtendWith({KubeExtension.class, KafkaExtension.class, CassandraExtension.class, NodeExtension.class})
abstract class E2ETest {

    static KubeCluster kube;
    static KafkaBroker kafka;
    static CassandraNode cassandra;
    static LocalNode node;
    static OperatorInstall install;
    static OperatorProcess operator;

    @BeforeAll
    static void startOperator(KubeCluster cluster, KafkaBroker broker, CassandraNode cassandraNode, LocalNode localNode,
            TestInfo test) {
        kube = cluster;
        kafka = broker;
        cassandra = cassandraNode;
        node = localNode;
        install = OperatorInstall.install(kube, "e2e/" + test.getTestClass().orElseThrow().getSimpleName());
        operator = install.startLeading("operator-1.log", E2ESettings.OPERATOR, E2ESettings.WAIT);
    }

    @AfterAll
    static void deleteJobsAndStopOperator() {
        E2EJob.deleteAll(kube);
        if (operator != null) {
            operator.close();
            operator = null;
        }
    }
}
