package dev.drover.httpapi;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The client side of the agent's TLS: an agent's certificate is self-signed,
 * so a client trusts exactly the certificate whose SHA-256 fingerprint the
 * agent published on its Node, and nothing else.
 */
public final class Pinning {

    private Pinning() {}

    /** A client TLS context that accepts only a server certificate with this fingerprint (lower-case hex). */
    public static SSLContext to(String fingerprint) throws GeneralSecurityException {
        return to(fingerprint, null);
    }

    /**
     * As {@link #to(String)}, presenting the client certificate of {@code keys} (null: none) to a server that asks
     * for one.
     */
    public static SSLContext to(String fingerprint, KeyManager keys) throws GeneralSecurityException {
        String expected = fingerprint.toLowerCase(java.util.Locale.ROOT);
        X509TrustManager pinned = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                throw new CertificateException("this trust manager checks servers only");
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                if (chain == null || chain.length == 0) {
                    throw new CertificateException("the server presented no certificate");
                }
                String actual = fingerprint(chain[0]);
                if (!actual.equals(expected)) {
                    throw new CertificateException("the agent's certificate has fingerprint " + actual + ", not the "
                            + expected + " published on its Node");
                }
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : new KeyManager[] {keys}, new TrustManager[] {pinned}, null);
        return context;
    }

    static String fingerprint(X509Certificate certificate) throws CertificateException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded()));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
