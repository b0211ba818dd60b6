package io.oncestream.operator.admission;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;

/**
 * The webhook's X.509 material: a CA and the serving certificate it signs (ECDSA P-256), and
 * their PEM form as a {@code kubernetes.io/tls} Secret and a {@code caBundle} hold them.
 */
public final class Certificates {

    /** A certificate with its key. */
    public record Issued(X509Certificate certificate, PrivateKey key) {

        public Instant notAfter() {
            return certificate.getNotAfter().toInstant();
        }

        public Instant notBefore() {
            return certificate.getNotBefore().toInstant();
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * A tenth of {@code validity}, at most a minute: how far back a certificate is valid from (so
     * that a clock slightly behind the operator's still accepts a fresh one), and how often it is
     * looked at.
     */
    static Duration tenthUpToAMinute(Duration validity) {
        Duration tenth = validity.dividedBy(10);
        return tenth.compareTo(Duration.ofMinutes(1)) > 0 ? Duration.ofMinutes(1) : tenth;
    }

    private Certificates() {
    }

    /** A self-signed CA valid for {@code validity} from now. */
    public static Issued ca(String commonName, Duration validity) {
        KeyPair keys = keyPair();
        Instant now = Instant.now();
        X500Name subject = new X500Name("CN=" + commonName);
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(),
                    Date.from(now.minus(tenthUpToAMinute(validity))), Date.from(now.plus(validity)), subject, keys.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            builder.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
            return new Issued(sign(builder, keys.getPrivate()), keys.getPrivate());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot make the webhook's CA: " + e.getMessage(), e);
        }
    }

    /** A serving certificate for {@code dnsNames}, signed by {@code ca}, valid for {@code validity} (at most as long as the CA). */
    public static Issued serving(Issued ca, List<String> dnsNames, Duration validity) {
        KeyPair keys = keyPair();
        Instant now = Instant.now();
        Instant notAfter = now.plus(validity).isAfter(ca.notAfter()) ? ca.notAfter() : now.plus(validity);
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(ca.certificate(), serial(),
                    Date.from(now.minus(tenthUpToAMinute(validity))), Date.from(notAfter), new X500Name("CN=" + dnsNames.get(0)),
                    keys.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            builder.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.certificate()));
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(dnsNames.stream()
                    .map(n -> new GeneralName(GeneralName.dNSName, n)).toArray(GeneralName[]::new)));
            return new Issued(sign(builder, ca.key()), keys.getPrivate());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot make the webhook's serving certificate: " + e.getMessage(), e);
        }
    }

    /** The names the API server may call a Service by: {@code svc}, {@code svc.ns}, {@code svc.ns.svc} and the cluster-local one. */
    public static List<String> serviceNames(String service, String namespace) {
        return List.of(service + "." + namespace + ".svc", service, service + "." + namespace,
                service + "." + namespace + ".svc.cluster.local");
    }

    /** PEM text of certificates, or of a private key (PKCS#8, "PRIVATE KEY", as cert-manager and openssl write it). */
    public static String pem(Object... objects) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            for (Object o : objects) {
                if (o instanceof PrivateKey key) {
                    writer.writeObject(new JcaPKCS8Generator(key, null));
                } else {
                    writer.writeObject(o);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** Every certificate in a PEM text, in order. */
    public static List<X509Certificate> certificates(String pem, String what) {
        List<X509Certificate> certificates = new ArrayList<>();
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
                if (o instanceof X509CertificateHolder holder) {
                    certificates.add(new JcaX509CertificateConverter().getCertificate(holder));
                }
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(what + " is not a PEM certificate: " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException(what + " holds no PEM certificate");
        }
        return certificates;
    }

    /** The private key of a PEM text (PKCS#8, or the traditional EC or RSA form). */
    public static PrivateKey privateKey(String pem, String what) {
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
                JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
                if (o instanceof PEMKeyPair pair) {
                    return converter.getPrivateKey(pair.getPrivateKeyInfo());
                }
                if (o instanceof PrivateKeyInfo info) {
                    return converter.getPrivateKey(info);
                }
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(what + " is not a PEM private key: " + e.getMessage(), e);
        }
        throw new IllegalArgumentException(what + " holds no unencrypted PEM private key");
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no EC P-256 key generator in this JVM: " + e.getMessage(), e);
        }
    }

    private static BigInteger serial() {
        return new BigInteger(127, RANDOM).add(BigInteger.ONE);
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder builder, PrivateKey signer) throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e.getMessage(), e);
        }
    }
}
