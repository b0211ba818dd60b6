package io.oncestream.operator.admission;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The webhook server's certificate, swapped while it serves: every TLS handshake takes the
 * certificate current at that moment, so a rotation needs no restart and drops no connection.
 */
public final class ServingKeys extends X509ExtendedKeyManager {

    /**
     * The current certificate and the one before it, by alias: a handshake asks for the alias
     * first and then for its chain and key, so a swap in between must not mix two certificates.
     */
    private volatile Certificates.Issued current;
    private volatile Certificates.Issued previous;

    /** Serves {@code issued} from the next handshake on. */
    public synchronized void use(Certificates.Issued issued) {
        if (current != null && current.certificate().equals(issued.certificate())) {
            return;
        }
        previous = current;
        current = issued;
    }

    private static String alias(Certificates.Issued issued) {
        return issued == null ? null : "webhook-" + issued.certificate().getSerialNumber().toString(16);
    }

    private Certificates.Issued byAlias(String alias) {
        Certificates.Issued now = current;
        if (alias != null && alias.equals(alias(now))) {
            return now;
        }
        Certificates.Issued before = previous;
        return alias != null && alias.equals(alias(before)) ? before : null;
    }

    /** The certificate served now, or null before the first one is known. */
    public X509Certificate certificate() {
        Certificates.Issued issued = current;
        return issued == null ? null : issued.certificate();
    }

    /** A TLS context whose server key is always the current one. */
    public SSLContext sslContext() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[] {this}, null, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no TLS in this JVM: " + e.getMessage(), e);
        }
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        Certificates.Issued now = current;
        return now == null ? null : new String[] {alias(now)};
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return alias(current);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return alias(current);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        Certificates.Issued issued = byAlias(alias);
        return issued == null ? null : new X509Certificate[] {issued.certificate()};
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        Certificates.Issued issued = byAlias(alias);
        return issued == null ? null : issued.key();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return null;
    }
}
