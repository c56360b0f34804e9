package dev.drover.gateway;

import dev.drover.httpapi.FixedKeyManager;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509TrustManager;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * The gateway's TLS: it serves the certificate and key in its PEM files (the chart's Secret, a PKCS#1 or PKCS#8
 * key), and asks clients for a certificate without requiring one. The handshake accepts any client certificate;
 * {@link RequestHeaderAuth} verifies it against the request-header CA it reads now, so a rotated CA needs no new
 * TLS context, and a request without a verified certificate is never taken for anyone.
 */
final class GatewayTls {

    private GatewayTls() {}

    static SSLContext serving(Path certFile, Path keyFile, RequestHeaderAuth auth)
            throws IOException, GeneralSecurityException {
        List<? extends Certificate> chain;
        try (InputStream in = Files.newInputStream(certFile)) {
            chain = List.copyOf(CertificateFactory.getInstance("X.509").generateCertificates(in));
        }
        if (chain.isEmpty()) {
            throw new GeneralSecurityException(certFile + " holds no certificate");
        }
        PrivateKey key = key(keyFile);
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("gateway", key, new char[0], chain.toArray(Certificate[]::new));
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, new char[0]);
        X509TrustManager clients = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
                // verified per request by RequestHeaderAuth against the CA it knows now
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType)
                    throws java.security.cert.CertificateException {
                throw new java.security.cert.CertificateException("the gateway is no TLS client");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return auth.authorities().toArray(X509Certificate[]::new);
            }
        };
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), new TrustManager[] {clients}, null);
        return context;
    }

    /**
     * The gateway's client certificate for agents (the chart's Secret, signed by the CA the agents read): presented
     * to every agent whatever issuers it names, as agents name none.
     */
    static X509ExtendedKeyManager client(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
        X509Certificate[] chain;
        try (InputStream in = Files.newInputStream(certFile)) {
            chain = CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
                    .map(X509Certificate.class::cast)
                    .toArray(X509Certificate[]::new);
        }
        if (chain.length == 0) {
            throw new GeneralSecurityException(certFile + " holds no certificate");
        }
        return new FixedKeyManager("gateway", key(keyFile), chain);
    }

    private static PrivateKey key(Path keyFile) throws IOException, GeneralSecurityException {
        Object read;
        try (Reader in = Files.newBufferedReader(keyFile);
                PEMParser pem = new PEMParser(in)) {
            read = pem.readObject();
        }
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        return switch (read) {
            case PEMKeyPair pair -> converter.getPrivateKey(pair.getPrivateKeyInfo());
            case PrivateKeyInfo info -> converter.getPrivateKey(info);
            case null, default -> throw new GeneralSecurityException(keyFile + " holds no PEM private key");
        };
    }
}
