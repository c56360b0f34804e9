package dev.drover.local;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import javax.net.ssl.KeyManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The front-proxy identity of the local API server, as kubeadm makes it: a request-header CA ({@code
 * front-proxy-ca}) and a client certificate it signed ({@code CN=front-proxy-client}), which the server shows
 * aggregated API backends; they trust the CA published in {@code kube-system/extension-apiserver-authentication}.
 */
final class FrontProxy {

    static final String CLIENT_NAME = "front-proxy-client";

    private final X509Certificate ca;
    private final X509Certificate client;
    private final KeyPair clientKey;

    FrontProxy(Instant now) {
        try {
            KeyPair caKey = ecKey();
            X500Name caName = new X500Name("CN=front-proxy-ca");
            ca = sign(
                    new JcaX509v3CertificateBuilder(
                                    caName,
                                    serial(),
                                    Date.from(now.minus(Duration.ofHours(1))),
                                    Date.from(now.plus(Duration.ofDays(365))),
                                    caName,
                                    caKey.getPublic())
                            .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                            .addExtension(
                                    Extension.keyUsage,
                                    true,
                                    new KeyUsage(KeyUsage.keyCertSign | KeyUsage.digitalSignature)),
                    caKey);
            clientKey = ecKey();
            client = sign(
                    new JcaX509v3CertificateBuilder(
                                    caName,
                                    serial(),
                                    Date.from(now.minus(Duration.ofHours(1))),
                                    Date.from(now.plus(Duration.ofDays(365))),
                                    new X500Name("CN=" + CLIENT_NAME),
                                    clientKey.getPublic())
                            .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                            .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                            .addExtension(
                                    Extension.extendedKeyUsage,
                                    false,
                                    new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth)),
                    caKey);
        } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the front-proxy certificates", e);
        }
    }

    private static KeyPair ecKey() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(128, new SecureRandom());
    }

    private static X509Certificate sign(org.bouncycastle.cert.X509v3CertificateBuilder builder, KeyPair signer)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter()
                .getCertificate(
                        builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    /** The request-header CA, PEM: what a backend trusts for front-proxy requests. */
    String caPem() {
        return pem(ca);
    }

    static String pem(X509Certificate certificate) {
        try {
            return "-----BEGIN CERTIFICATE-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(certificate.getEncoded())
                    + "\n-----END CERTIFICATE-----\n";
        } catch (java.security.cert.CertificateEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Key managers presenting the front-proxy client certificate. */
    javax.net.ssl.KeyManager[] keyManagers() throws GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try {
            store.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        store.setKeyEntry(
                "front-proxy-client", clientKey.getPrivate(), new char[0], new X509Certificate[] {client, ca});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, new char[0]);
        return kmf.getKeyManagers();
    }
}
