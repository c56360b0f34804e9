package dev.drover.gateway;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A CA and the certificates it signs, for the gateway's tests: the front proxy's, an impostor's, the server's. */
final class TestCertificates {

    /** A certificate and its key. */
    record Issued(X509Certificate certificate, KeyPair key) {}

    final String name;
    final Issued ca;

    TestCertificates(String name) throws Exception {
        this.name = name;
        KeyPair key = key();
        X500Name subject = new X500Name("CN=" + name);
        ca = new Issued(
                sign(
                        new JcaX509v3CertificateBuilder(subject, serial(), from(), until(), subject, key.getPublic())
                                .addExtension(Extension.basicConstraints, true, new BasicConstraints(true)),
                        key),
                key);
    }

    private TestCertificates(String name, Issued ca) {
        this.name = name;
        this.ca = ca;
    }

    /** An intermediate CA signed by this one, its extended key usage only {@code usage}. */
    TestCertificates intermediate(String intermediateName, KeyPurposeId usage) throws Exception {
        KeyPair key = key();
        return new TestCertificates(
                intermediateName,
                new Issued(
                        sign(
                                new JcaX509v3CertificateBuilder(
                                                new X500Name("CN=" + name),
                                                serial(),
                                                from(),
                                                until(),
                                                new X500Name("CN=" + intermediateName),
                                                key.getPublic())
                                        .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                                        .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(usage)),
                                ca.key()),
                        key));
    }

    /** A client certificate with this common name, signed by the CA. */
    Issued client(String commonName) throws Exception {
        return client(new X500Name("CN=" + commonName));
    }

    /** A client certificate with this subject (its RDNs in the order written), signed by the CA. */
    Issued client(X500Name subject) throws Exception {
        KeyPair key = key();
        return new Issued(
                sign(
                        new JcaX509v3CertificateBuilder(
                                        new X500Name("CN=" + name), serial(), from(), until(), subject, key.getPublic())
                                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                                .addExtension(
                                        Extension.extendedKeyUsage,
                                        false,
                                        new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth)),
                        ca.key()),
                key);
    }

    /** A serving certificate for {@code dnsName}, signed by the CA. */
    Issued server(String dnsName) throws Exception {
        KeyPair key = key();
        return new Issued(
                sign(
                        new JcaX509v3CertificateBuilder(
                                        new X500Name("CN=" + name),
                                        serial(),
                                        from(),
                                        until(),
                                        new X500Name("CN=" + dnsName),
                                        key.getPublic())
                                .addExtension(
                                        Extension.subjectAlternativeName,
                                        false,
                                        new org.bouncycastle.asn1.x509.GeneralNames(
                                                new org.bouncycastle.asn1.x509.GeneralName(
                                                        org.bouncycastle.asn1.x509.GeneralName.dNSName, dnsName))),
                        ca.key()),
                key);
    }

    String caPem() throws IOException {
        return pem(ca.certificate());
    }

    static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }

    /** Writes {@code issued} as tls.crt and tls.key (PKCS#8) in {@code dir}. */
    static void write(Issued issued, Path dir) throws IOException {
        Files.writeString(dir.resolve("tls.crt"), pem(issued.certificate()));
        Files.writeString(
                dir.resolve("tls.key"),
                "-----BEGIN PRIVATE KEY-----\n"
                        + java.util.Base64.getMimeEncoder()
                                .encodeToString(issued.key().getPrivate().getEncoded())
                        + "\n-----END PRIVATE KEY-----\n");
    }

    /** A client TLS context presenting {@code as} (null: no certificate) and trusting any server. */
    static SSLContext clientTls(Issued as) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        if (as != null) {
            store.setKeyEntry("me", as.key().getPrivate(), new char[0], new X509Certificate[] {as.certificate()});
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, new char[0]);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(
                kmf.getKeyManagers(),
                new TrustManager[] {
                    new X509TrustManager() {
                        @Override
                        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

                        @Override
                        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

                        @Override
                        public X509Certificate[] getAcceptedIssuers() {
                            return new X509Certificate[0];
                        }
                    }
                },
                null);
        return tls;
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer) throws Exception {
        return new JcaX509CertificateConverter()
                .getCertificate(
                        builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    private static KeyPair key() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(64, new SecureRandom());
    }

    private static Date from() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date until() {
        return Date.from(Instant.now().plus(Duration.ofDays(1)));
    }
}
