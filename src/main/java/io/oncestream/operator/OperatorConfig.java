package io.oncestream.operator;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * The operator's settings ({@code oncestream.operator.*} in application.properties, or the
 * matching {@code ONCESTREAM_OPERATOR_*} environment variables). Which namespaces are watched
 * is the SDK's setting {@code quarkus.operator-sdk.controllers.streamjob.namespaces}.
 */
@ConfigMapping(prefix = "oncestream.operator")
public interface OperatorConfig {

    /** How often each running worker's {@code /progress} is read; status is patched only when it changed. */
    @WithDefault("5s")
    Duration pollInterval();

    /** Connect and read timeout of one {@code /progress} request; a slower worker is reported unreachable. */
    @WithDefault("2s")
    Duration pollTimeout();

    /** Image of the workers when a StreamJob names none: this operator's own image (it contains the worker). */
    @WithDefault("oncestream/oncestream:${quarkus.application.version}")
    String workerImage();

    /** Pull policy of worker containers. */
    @WithDefault("IfNotPresent")
    String workerImagePullPolicy();

    /** Seconds a worker has after SIGTERM to stop at a safe point (the worker itself gives up after 25). */
    @WithDefault("30")
    long workerTerminationGraceSeconds();

    /** Leader election: one active operator among replicas. */
    LeaderElection leaderElection();

    /** Lease-based leader election settings. */
    interface LeaderElection {

        /** Whether replicas elect a leader (only the leader reconciles). */
        @WithDefault("true")
        boolean enabled();

        /** Name of the coordination.k8s.io Lease. */
        @WithDefault("oncestream-operator")
        String leaseName();

        /** Namespace of the Lease; by default the operator's own namespace (from its service account or kubeconfig). */
        Optional<String> leaseNamespace();

        /** How long a leader holds the lease without renewing it. */
        @WithDefault("15s")
        Duration leaseDuration();

        /** How long the leader keeps trying to renew before it gives up leadership. */
        @WithDefault("10s")
        Duration renewDeadline();

        /** How often candidates retry. */
        @WithDefault("2s")
        Duration retryPeriod();
    }

    /** The validating admission webhook (docs/operator.md, "Admission"). */
    Webhook webhook();

    /** Settings of the admission webhook the operator serves. */
    interface Webhook {

        /** Whether this operator serves the webhook (the chart turns it on and registers it). */
        @WithDefault("false")
        boolean enabled();

        /** HTTPS port of the webhook, apart from the metrics and health port. */
        @WithDefault("9443")
        int port();

        /**
         * Who makes the serving certificate: {@code self} (the operator creates its CA and certificate,
         * keeps them in the Secret, rotates them and keeps the webhook configuration's caBundle current)
         * or {@code external} (cert-manager or another tool writes the Secret and the caBundle; the
         * operator only serves what the Secret holds, reloading it when it changes).
         */
        @WithDefault("self")
        CertificateSource certificates();

        /** The Secret ({@code kubernetes.io/tls}, in the operator's namespace) that holds the certificate. */
        @WithDefault("oncestream-operator-webhook-tls")
        String secretName();

        /** The Service in front of the webhook (in the operator's namespace): the certificate's names. */
        @WithDefault("oncestream-operator-webhook")
        String serviceName();

        /** The ValidatingWebhookConfiguration whose caBundle the operator keeps current (self-made certificates). */
        @WithDefault("oncestream-operator-oncestream-system")
        String configurationName();

        /** How long a self-made CA and serving certificate are valid; both are replaced when a third of that is left. */
        @WithDefault("8760h")
        Duration certificateValidity();
    }

    /** Where the webhook's certificate comes from. */
    enum CertificateSource {
        self, external
    }
}
