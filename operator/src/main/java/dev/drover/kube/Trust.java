package dev.drover.kube;

import dev.drover.web.TrustingAllCertificates;
import java.io.IOException;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Whom a client of the API server trusts: the PEM certificates it was given (a kubeconfig's
 * {@code certificate-authority}, the agent's {@code caCertData} or CA file), else the JDK's roots; or every server,
 * where it was told to skip verification. With a server name ({@code tls-server-name}) the server's certificate must
 * carry that name rather than the host's. The kubectl plugin and the agent's own raw client both build their trust
 * here.
 */
public final class Trust {

    private Trust() {}

    /**
     * The trust managers for a TLS context.
     *
     * @param caPem the certificates to trust, in PEM; null for the JDK's roots
     * @param what what holds {@code caPem}, for the messages ("the kubeconfig's certificate-authority")
     * @param insecure trust every server, whatever the rest says
     * @param serverName the name the server's certificate must carry instead of the host's; null for the host
     */
    public static TrustManager[] managers(byte[] caPem, String what, boolean insecure, String serverName)
            throws PemException, GeneralSecurityException {
        if (insecure) {
            return new TrustManager[] {new TrustingAllCertificates()};
        }
        X509TrustManager roots = roots(caPem, what);
        return new TrustManager[] {serverName == null ? roots : new NamedServer(roots, serverName)};
    }

    /** The certificates in {@code caPem}, or (null) the JDK's own trusted roots. */
    private static X509TrustManager roots(byte[] caPem, String what) throws PemException, GeneralSecurityException {
        KeyStore store = null;
        if (caPem != null) {
            store = KeyStore.getInstance(KeyStore.getDefaultType());
            try {
                store.load(null, null);
            } catch (IOException e) {
                throw new GeneralSecurityException(e);
            }
            int i = 0;
            for (X509Certificate c : Pem.certificates(caPem, what)) {
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
