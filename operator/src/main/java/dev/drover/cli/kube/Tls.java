package dev.drover.cli.kube;

import dev.drover.web.TrustingAllCertificates;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS a kubeconfig describes: the certificates to trust ({@code certificate-authority}, else the JDK's roots),
 * or none ({@code insecure-skip-tls-verify}), the name the server's certificate must carry ({@code tls-server-name},
 * else the host) and the client certificate to present.
 */
final class Tls {

    private Tls() {}

    static SSLContext context(byte[] caPem, boolean insecure, String serverName, byte[] certPem, byte[] keyPem)
            throws KubeconfigException {
        try {
            KeyManager[] keys = null;
            if (certPem != null) {
                List<X509Certificate> chain = Pem.certificates(certPem, "the client certificate");
                PrivateKey key = Pem.privateKey(keyPem, "the client key");
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                store.setKeyEntry("client", key, new char[0], chain.toArray(X509Certificate[]::new));
                KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                factory.init(store, new char[0]);
                keys = factory.getKeyManagers();
            }
            TrustManager[] trust;
            if (insecure) {
                trust = new TrustManager[] {new TrustingAllCertificates()};
            } else {
                X509TrustManager roots = roots(caPem);
                trust = new TrustManager[] {serverName == null ? roots : new NamedServer(roots, serverName)};
            }
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(keys, trust, null);
            return tls;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new KubeconfigException("cannot set up TLS from the kubeconfig: " + e.getMessage());
        }
    }

    /** The kubeconfig's CA certificates, or (null) the JDK's own trusted roots. */
    private static X509TrustManager roots(byte[] caPem) throws GeneralSecurityException, KubeconfigException {
        KeyStore store = null;
        if (caPem != null) {
            store = KeyStore.getInstance(KeyStore.getDefaultType());
            try {
                store.load(null, null);
            } catch (java.io.IOException e) {
                throw new GeneralSecurityException(e);
            }
            int i = 0;
            for (X509Certificate c : Pem.certificates(caPem, "the kubeconfig's certificate-authority")) {
                store.setCertificateEntry("ca-" + i++, c);
            }
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        for (TrustManager t : factory.getTrustManagers()) {
            if (t instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }

    /** Whether {@code name} matches a certificate's DNS name {@code pattern} (one leading wildcard label). */
    static boolean matches(String pattern, String name) {
        String p = pattern.toLowerCase(Locale.ROOT);
        String n = name.toLowerCase(Locale.ROOT);
        if (p.startsWith("*.")) {
            int dot = n.indexOf('.');
            return dot > 0 && n.substring(dot).equals(p.substring(1));
        }
        return p.equals(n);
    }

    /**
     * Trusts a chain the roots trust whose leaf names {@code serverName} (tls-server-name), whatever the host the
     * connection went to: an extended manager, so the JDK adds no check of the host's name.
     */
    private static final class NamedServer extends X509ExtendedTrustManager {
        private final X509TrustManager roots;
        private final String serverName;

        NamedServer(X509TrustManager roots, String serverName) {
            this.roots = roots;
            this.serverName = serverName;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            roots.checkServerTrusted(chain, authType); // the two-argument form: the chain only, no host name
            if (names(chain[0]).stream().noneMatch(n -> matches(n, serverName))) {
                throw new CertificateException(
                        "the server's certificate is not for " + serverName + " (the kubeconfig's tls-server-name)");
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        private static List<String> names(X509Certificate c) throws CertificateParsingException {
            var sans = c.getSubjectAlternativeNames();
            return sans == null
                    ? List.of()
                    : sans.stream()
                            .filter(s -> s.size() == 2
                                    && (s.get(0).equals(2) || s.get(0).equals(7)))
                            .map(s -> String.valueOf(s.get(1)))
                            .toList();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("not a server");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("not a server");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("not a server");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return roots.getAcceptedIssuers();
        }
    }
}
