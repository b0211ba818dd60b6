package io.oncestream.operator;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.ObserverMethod;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.quarkiverse.operatorsdk.runtime.api.ConfigurationServiceCustomizer;
import io.quarkus.runtime.ShutdownEvent;

/**
 * Lease-based leader election (on by default): of several operator replicas only the holder
 * of the Lease reconciles.
 *
 * <p>Two departures from the SDK's own handling, both about stopping:
 * <ul>
 * <li>The SDK exits the JVM from its stop-leading callback. When the operator stops on SIGTERM,
 * that callback runs inside the JVM's shutdown hook, and {@code System.exit} there waits forever
 * for the shutdown it is part of: the process never ended and every rollout waited out the grace
 * period. Here the SDK does not exit; a leader that loses its lease while running exits from a
 * thread of its own (so the shutdown hook is never blocked), and a leader that is stopping just
 * stops.</li>
 * <li>The SDK does not release the lease when it stops, so a standby would wait a whole lease
 * duration. After the controllers have stopped, a leader that still holds the lease empties its
 * holder, and a standby takes over at its next retry.</li>
 * </ul>
 */
@Singleton
public class LeaderElectionSetup implements ConfigurationServiceCustomizer {

    private static final Logger LOG = Logger.getLogger(LeaderElectionSetup.class);
    /** The SDK's extension stops the operator on {@link ShutdownEvent} at the default observer priority. */
    private static final int SDK_STOP_PRIORITY = ObserverMethod.DEFAULT_PRIORITY;

    private final OperatorConfig config;
    private final KubernetesClient client;
    private final AtomicBoolean stopping = new AtomicBoolean();

    public LeaderElectionSetup(OperatorConfig config, KubernetesClient client) {
        this.config = config;
        this.client = client;
    }

    @Override
    public Consumer<ConfigurationServiceOverrider> overrider() {
        OperatorConfig.LeaderElection le = config.leaderElection();
        return overrider -> {
            if (!le.enabled()) {
                LOG.info("leader election is off: this instance reconciles on its own");
                return;
            }
            LOG.infof("leader election on lease %s/%s as %s", leaseNamespace(), le.leaseName(), OperatorIdentity.get());
            LeaderCallbacks callbacks = new LeaderCallbacks(
                    () -> LOG.infof("leading on lease %s/%s", leaseNamespace(), le.leaseName()),
                    this::stoppedLeading,
                    leader -> LOG.infof("the leader is %s", leader));
            overrider.withLeaderElectionConfiguration(new LeaderElectionConfiguration(le.leaseName(),
                    le.leaseNamespace().orElse(null), le.leaseDuration(), le.renewDeadline(), le.retryPeriod(),
                    OperatorIdentity.get(), callbacks, false));
        };
    }

    private void stoppedLeading() {
        if (stopping.get()) {
            return;
        }
        LOG.error("lost the leader-election lease: exiting so that only the new leader reconciles");
        Thread exit = new Thread(() -> System.exit(1), "lost-lease-exit");
        exit.setDaemon(true);
        exit.start();
    }

    void beforeOperatorStops(@Observes @Priority(SDK_STOP_PRIORITY - 1) ShutdownEvent event) {
        stopping.set(true);
    }

    void afterOperatorStopped(@Observes @Priority(SDK_STOP_PRIORITY + 1) ShutdownEvent event) {
        if (config.leaderElection().enabled()) {
            releaseLease();
        }
    }

    /** Empties the lease's holder if this instance still holds it (never takes someone else's). */
    void releaseLease() {
        String namespace = leaseNamespace();
        String name = config.leaderElection().leaseName();
        String me = OperatorIdentity.get();
        try {
            Lease lease = client.leases().inNamespace(namespace).withName(name).get();
            if (lease == null || lease.getSpec() == null || !me.equals(lease.getSpec().getHolderIdentity())) {
                return;
            }
            lease.getSpec().setHolderIdentity(null);
            lease.getSpec().setLeaseDurationSeconds(1);
            // update, not patch: the resourceVersion makes it fail if another instance took the lease meanwhile
            client.leases().inNamespace(namespace).resource(lease).update();
            LOG.infof("released lease %s/%s", namespace, name);
        } catch (KubernetesClientException e) {
            LOG.warnf("could not release lease %s/%s (a standby takes over when it expires): %s", namespace, name,
                    e.getMessage());
        }
    }

    private String leaseNamespace() {
        return config.leaderElection().leaseNamespace().orElseGet(client::getNamespace);
    }
}
