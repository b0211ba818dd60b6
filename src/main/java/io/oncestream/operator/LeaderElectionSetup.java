package io.oncestream.operator;

import java.util.function.Consumer;

import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.quarkiverse.operatorsdk.runtime.api.ConfigurationServiceCustomizer;

/**
 * Lease-based leader election (on by default): of several operator replicas only the holder
 * of the Lease reconciles; one that loses the lease exits and is restarted as a candidate.
 */
@Singleton
public class LeaderElectionSetup implements ConfigurationServiceCustomizer {

    private static final Logger LOG = Logger.getLogger(LeaderElectionSetup.class);

    private final OperatorConfig config;

    public LeaderElectionSetup(OperatorConfig config) {
        this.config = config;
    }

    @Override
    public Consumer<ConfigurationServiceOverrider> overrider() {
        OperatorConfig.LeaderElection le = config.leaderElection();
        return overrider -> {
            if (!le.enabled()) {
                LOG.info("leader election is off: this instance reconciles on its own");
                return;
            }
            LOG.infof("leader election on lease %s/%s as %s", le.leaseNamespace().orElse("(operator namespace)"),
                    le.leaseName(), OperatorIdentity.get());
            overrider.withLeaderElectionConfiguration(new LeaderElectionConfiguration(le.leaseName(),
                    le.leaseNamespace().orElse(null), le.leaseDuration(), le.renewDeadline(), le.retryPeriod(),
                    OperatorIdentity.get(), null, true));
        };
    }
}
