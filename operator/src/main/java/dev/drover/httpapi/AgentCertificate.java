package dev.drover.httpapi;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's TLS identity for its HTTPS API: an EC P-256 key and a
 * self-signed certificate for the node, made at first start and kept in
 * {@code DATA_DIR/tls/} (the key readable by the agent alone). There is no CA:
 * clients pin the certificate by its SHA-256 {@link Identity#fingerprint()},
 * which the agent publishes on its Node. A certificate within
 * {@link #RENEW_BEFORE} of expiry, made for other names, or unreadable is
 * replaced by a new one (and so a new fingerprint).
 */
public final class AgentCertificate {

    private static final Logger LOG = LoggerFactory.getLogger(AgentCertificate.class);

    public static final Duration VALIDITY = Duration.ofDays(365);
    public static final Duration RENEW_BEFORE = Duration.ofDays(30);

    private AgentCertificate() {}

    /** A key and its certificate. */
    public record Identity(PrivateKey key, X509Certificate certificate) {

        /** The SHA-256 of the certificate's DER encoding, lower-case hex: what clients pin. */
        public String fingerprint() {
            try {
                return Pinning.fingerprint(certificate);
            } catch (java.security.cert.CertificateException e) {
                throw new IllegalStateException("a certificate this agent made cannot be encoded", e);
            }
        }

        public Instant notAfter() {
            return certificate.getNotAfter().toInstant();
        }

        /**
         * This identity as a client's certificate: what an agent presents when it claims a disk from another node's
         * agent, which checks it against the fingerprint this node's agent publishes.
         */
        public X509KeyManager clientKeys() {
            return new FixedKeyManager("agent", key, new X509Certificate[] {certificate});
        }

        /**
         * A server-side TLS context presenting this identity; it takes any client certificate, which
         * {@link GatewayTrust} checks per request.
         */
        public SSLContext sslContext() throws GeneralSecurityException {
            KeyStore store = KeyStore.getInstance("PKCS12");
            try {
                store.load(null, null);
            } catch (IOException e) {
                throw new GeneralSecurityException("cannot create an in-memory key store", e);
            }
            char[] password = new char[0];
            store.setKeyEntry("agent", key, password, new X509Certificate[] {certificate});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), new TrustManager[] {GatewayTrust.checkedPerRequest()}, null);
            return context;
        }
    }

    /**
     * The identity stored in {@code dir}, or a new one (stored there) when there is none, it expires within
     * {@link #RENEW_BEFORE}, it does not name {@code node} and every one of {@code addresses}, or it cannot be
     * read.
     */
    public static Identity loadOrCreate(Path dir, String node, List<InetAddress> addresses, Clock clock)
            throws IOException {
        Path keyFile = dir.resolve("agent.key");
        Path certFile = dir.resolve("agent.crt");
        if (Files.exists(keyFile) && Files.exists(certFile)) {
            try {
                Identity stored = read(keyFile, certFile);
                String why = unusable(stored, node, addresses, clock.instant());
                if (why == null) {
                    return stored;
                }
                LOG.info("replacing the agent's TLS certificate in {}: {}", dir, why);
            } catch (IOException | GeneralSecurityException | RuntimeException e) {
                LOG.warn("replacing the agent's TLS certificate in {}: it cannot be read ({})", dir, e.toString());
            }
        }
        Identity made = create(node, addresses, clock.instant());
        write(dir, keyFile, certFile, made);
        return made;
    }

    /** Why a stored identity will not do, or null when it will. */
    static String unusable(Identity id, String node, List<InetAddress> addresses, Instant now) {
        if (!id.notAfter().isAfter(now.plus(RENEW_BEFORE))) {
            return "it expires at " + id.notAfter() + ", within " + RENEW_BEFORE.toDays() + " days";
        }
        List<String> names = subjectAltNames(id.certificate());
        if (!names.contains(node)) {
            return "it is made for " + names + ", not for node " + node;
        }
        for (InetAddress a : addresses) {
            if (!names.contains(a.getHostAddress())) {
                return "it does not name the address " + a.getHostAddress();
            }
        }
        return null;
    }

    /** A new key and a certificate for {@code node} and {@code addresses}, valid for {@link #VALIDITY} from {@code now}. */
    public static Identity create(String node, List<InetAddress> addresses, Instant now) throws IOException {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair pair = generator.generateKeyPair();
            var subject = new X500NameBuilder(BCStyle.INSTANCE)
                    .addRDN(BCStyle.O, "drover")
                    .addRDN(BCStyle.CN, "drover-agent " + node)
                    .build();
            List<GeneralName> names = new ArrayList<>();
            names.add(new GeneralName(GeneralName.dNSName, node));
            for (InetAddress a : addresses) {
                names.add(new GeneralName(GeneralName.iPAddress, a.getHostAddress()));
            }
            var builder = new JcaX509v3CertificateBuilder(
                            subject,
                            new BigInteger(128, new SecureRandom()),
                            Date.from(now.minus(Duration.ofHours(1))),
                            Date.from(now.plus(VALIDITY)),
                            subject,
                            pair.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                        KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                    })) // a client's too: it claims disks from other nodes' agents with it
                    .addExtension(
                            Extension.subjectAlternativeName,
                            false,
                            new GeneralNames(names.toArray(GeneralName[]::new)));
            X509CertificateHolder holder =
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate()));
            return new Identity(pair.getPrivate(), new JcaX509CertificateConverter().getCertificate(holder));
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IOException("cannot make the agent's TLS certificate: " + e.getMessage(), e);
        }
    }

    private static List<String> subjectAltNames(X509Certificate c) {
        List<String> out = new ArrayList<>();
        try {
            if (c.getSubjectAlternativeNames() != null) {
                c.getSubjectAlternativeNames().forEach(entry -> out.add(String.valueOf(entry.get(1))));
            }
        } catch (java.security.cert.CertificateParsingException e) {
            return out;
        }
        return out;
    }

    private static Identity read(Path keyFile, Path certFile) throws IOException, GeneralSecurityException {
        PrivateKey key;
        try (Reader r = Files.newBufferedReader(keyFile);
                PEMParser parser = new PEMParser(r)) {
            Object o = parser.readObject();
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            if (o instanceof PrivateKeyInfo info) {
                key = converter.getPrivateKey(info);
            } else if (o instanceof PEMKeyPair pair) {
                key = converter.getKeyPair(pair).getPrivate();
            } else {
                throw new IOException(keyFile + " holds no private key");
            }
        }
        X509Certificate cert;
        try (Reader r = new StringReader(Files.readString(certFile));
                PEMParser parser = new PEMParser(r)) {
            if (!(parser.readObject() instanceof X509CertificateHolder holder)) {
                throw new IOException(certFile + " holds no certificate");
            }
            cert = new JcaX509CertificateConverter().getCertificate(holder);
        }
        return new Identity(key, cert);
    }

    private static void write(Path dir, Path keyFile, Path certFile, Identity id) throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        // PKCS#8 ("PRIVATE KEY"), as openssl and every TLS library read it; BC's writer would make SEC1 of it.
        String key = "-----BEGIN PRIVATE KEY-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                        .encodeToString(id.key().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        replace(keyFile, key, true);
        replace(certFile, pem(id.certificate()), false);
    }

    /** Writes a file whole or not at all; a key is readable by the agent alone from the start. */
    private static void replace(Path file, String content, boolean secret) throws IOException {
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(temp);
        if (secret) {
            Files.createFile(temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        Files.writeString(temp, content);
        try {
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }
}
