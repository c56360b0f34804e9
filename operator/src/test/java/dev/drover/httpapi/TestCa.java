package dev.drover.httpapi;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import javax.net.ssl.X509KeyManager;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A CA for tests, as the chart's genCA makes one, and the certificates it signs (as genSignedCert does). */
public final class TestCa {

    private final KeyPair pair;
    private final X509Certificate certificate;

    public TestCa(String name) throws Exception {
        pair = ecKeys();
        X500Name subject = new X500Name("CN=" + name);
        certificate = sign(
                subject,
                pair.getPublic(),
                subject,
                pair.getPrivate(),
                builder -> builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                        .addExtension(
                                Extension.keyUsage,
                                true,
                                new KeyUsage(KeyUsage.keyCertSign | KeyUsage.digitalSignature)));
    }

    /** A key and certificate, signed by this CA, for {@code usages}. */
    public record Leaf(PrivateKey key, X509Certificate certificate) {
        /** Presents this certificate to any server that asks, as the gateway's key manager does. */
        public X509KeyManager keyManager() {
            return new FixedKeyManager("leaf", key, new X509Certificate[] {certificate});
        }
    }

    public Leaf sign(String commonName, KeyPurposeId... usages) throws Exception {
        return leaf(commonName, null, usages);
    }

    /** A server's key and certificate for the IP address {@code ip} (in its subjectAltName, as clients check). */
    public Leaf signServer(String ip, KeyPurposeId... usages) throws Exception {
        return leaf(ip, new GeneralNames(new GeneralName(GeneralName.iPAddress, ip)), usages);
    }

    private Leaf leaf(String commonName, GeneralNames altNames, KeyPurposeId... usages) throws Exception {
        KeyPair leaf = ecKeys();
        X509Certificate c = sign(
                new X500Name("CN=" + commonName),
                leaf.getPublic(),
                new X500Name(certificate.getSubjectX500Principal().getName()),
                pair.getPrivate(),
                builder -> {
                    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                            .addExtension(
                                    Extension.keyUsage,
                                    true,
                                    new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
                            .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(usages));
                    return altNames == null
                            ? builder
                            : builder.addExtension(Extension.subjectAlternativeName, false, altNames);
                });
        return new Leaf(leaf.getPrivate(), c);
    }

    /** {@code key} as PKCS #8 PEM. */
    public static String pemKey(PrivateKey key) {
        return "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
    }

    /** Writes this CA's certificate, PEM, to {@code file} (replacing it whole). */
    public Path writePem(Path file) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".new");
        Files.writeString(next, pem(certificate));
        return Files.move(
                next,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    public static String pem(X509Certificate c) throws IOException {
        try {
            return "-----BEGIN CERTIFICATE-----\n"
                    + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(c.getEncoded())
                    + "\n-----END CERTIFICATE-----\n";
        } catch (java.security.cert.CertificateEncodingException e) {
            throw new IOException(e);
        }
    }

    private interface Extensions {
        org.bouncycastle.cert.X509v3CertificateBuilder add(JcaX509v3CertificateBuilder builder) throws Exception;
    }

    private static X509Certificate sign(
            X500Name subject, java.security.PublicKey key, X500Name issuer, PrivateKey issuerKey, Extensions extensions)
            throws Exception {
        Instant now = Instant.now();
        var builder = new JcaX509v3CertificateBuilder(
                issuer,
                new BigInteger(64, new SecureRandom()),
                Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(Duration.ofDays(30))),
                subject,
                key);
        return new JcaX509CertificateConverter()
                .getCertificate(
                        extensions.add(builder).build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    }

    private static KeyPair ecKeys() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }
}
