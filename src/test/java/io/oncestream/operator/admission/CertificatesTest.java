package io.oncestream.operator.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Test;

/**
 * The webhook's certificates: what the Secret holds reads back as it was written (PKCS#8 keys,
 * and the traditional EC form), the serving certificate verifies against the CA with the
 * Service's names, renewal starts when a third of the validity is left, and a TLS server on
 * {@link ServingKeys} serves a new certificate from the next handshake without a restart.
 */
class CertificatesTest {

    @Test
    void theSecretsPemReadsBackAndTheServingCertificateVerifiesAgainstTheCa() throws Exception {
        Certificates.Issued ca = Certificates.ca("oncestream-webhook-ca", Duration.ofDays(365));
        Certificates.Issued serving = Certificates.serving(ca, Certificates.serviceNames("op-webhook", "ops"), Duration.ofDays(365));

        String keyPem = Certificates.pem(serving.key());
        assertThat(keyPem).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Certificates.privateKey(keyPem, "tls.key").getEncoded()).isEqualTo(serving.key().getEncoded());
        List<X509Certificate> bundle = Certificates.certificates(Certificates.pem(ca.certificate(), serving.certificate()), "bundle");
        assertThat(bundle).containsExactly(ca.certificate(), serving.certificate());

        serving.certificate().verify(ca.certificate().getPublicKey());
        assertThat(serving.certificate().getSubjectAlternativeNames().stream().map(san -> String.valueOf(san.get(1))).toList())
                .contains("op-webhook.ops.svc", "op-webhook.ops.svc.cluster.local");
        assertThat(ca.certificate().getBasicConstraints()).isZero();
        assertThat(serving.certificate().getBasicConstraints()).isEqualTo(-1);
        assertThat(serving.certificate().getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
    }

    @Test
    void traditionalEcKeysAsOpensslWritesThemAreReadToo() {
        // Written by `openssl ecparam -name prime256v1 -genkey -noout`, the form cert-manager's
        // and older tools' Secrets can hold.
        String traditional = """
                -----BEGIN EC PRIVATE KEY-----
                MHcCAQEEII+mPKHpF+hf57DBKcAgxYcnlDHQphmgKlubV0cw1NZ1oAoGCCqGSM49
                AwEHoUQDQgAE/khgXmoi/h4qE7J6Yp5VhrJJAqpnL0x/XQX40N7G7u3aowQTNXRM
                Q9lCRFwei7w0Bad4n8aFLHHkzU2FSXa5Iw==
                -----END EC PRIVATE KEY-----
                """;
        assertThat(Certificates.privateKey(traditional, "tls.key").getAlgorithm()).isEqualTo("EC");
        assertThatThrownBy(() -> Certificates.privateKey("not pem", "Secret ops/x tls.key"))
                .hasMessageContaining("Secret ops/x tls.key");
        assertThatThrownBy(() -> Certificates.certificates("", "Secret ops/x ca.crt"))
                .hasMessageContaining("Secret ops/x ca.crt holds no PEM certificate");
    }

    @Test
    void renewalIsDueWhenAThirdOfTheValidityIsLeft() {
        Certificates.Issued ca = Certificates.ca("ca", Duration.ofSeconds(90));
        Instant notBefore = ca.notBefore();
        Instant notAfter = ca.notAfter();
        Duration life = Duration.between(notBefore, notAfter);
        assertThat(WebhookCertificates.renewalDue(ca, notBefore.plus(life.dividedBy(2)))).isFalse();
        assertThat(WebhookCertificates.renewalDue(ca, notAfter.minus(life.dividedBy(3)).plusSeconds(1))).isTrue();
        assertThat(WebhookCertificates.renewalDue(ca, notAfter.plusSeconds(1))).isTrue();
    }

    @Test
    void aRotatedCertificateIsServedFromTheNextHandshakeWithoutARestart() throws Exception {
        Certificates.Issued ca1 = Certificates.ca("ca-1", Duration.ofDays(1));
        Certificates.Issued ca2 = Certificates.ca("ca-2", Duration.ofDays(1));
        List<String> names = Certificates.serviceNames("localhost", "test");
        ServingKeys keys = new ServingKeys();
        keys.use(Certificates.serving(ca1, names, Duration.ofDays(1)));
        try (SSLServerSocket server = (SSLServerSocket) keys.sslContext().getServerSocketFactory()
                .createServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try (SSLSocket socket = (SSLSocket) server.accept()) {
                        socket.startHandshake();
                        socket.getOutputStream().write(1);
                    } catch (Exception e) {
                        // the client of a failed handshake sees the failure; the server goes on
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            // A client context per handshake: one context would resume its TLS session and see the first certificate again.
            X509Certificate first = handshake(trusting(ca1.certificate(), ca2.certificate()), server.getLocalPort());
            first.verify(ca1.certificate().getPublicKey());

            keys.use(Certificates.serving(ca2, names, Duration.ofDays(1)));
            X509Certificate second = handshake(trusting(ca1.certificate(), ca2.certificate()), server.getLocalPort());
            second.verify(ca2.certificate().getPublicKey());
            assertThat(second.getSerialNumber()).isNotEqualTo(first.getSerialNumber());
            assertThatThrownBy(() -> handshake(trusting(ca1.certificate()), server.getLocalPort()))
                    .as("a client that trusts only the old CA is refused the new certificate").isInstanceOf(Exception.class);
        }
    }

    private static SSLContext trusting(X509Certificate... cas) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        for (int i = 0; i < cas.length; i++) {
            store.setCertificateEntry("ca" + i, cas[i]);
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }

    private static X509Certificate handshake(SSLContext context, int port) throws Exception {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
            socket.setSoTimeout(5000);
            socket.startHandshake();
            assertThat(socket.getInputStream().read()).isEqualTo(1);
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }
}
