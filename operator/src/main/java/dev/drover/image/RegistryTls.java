package dev.drover.image;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS trust of the registry client: the JDK's CA certificates, and those of the agent's {@code registryCAFile}
 * (a private registry's CA) when it names one. A registry's certificate is accepted when either trusts it.
 */
public final class RegistryTls {

    private RegistryTls() {}

    /** A TLS context trusting the system's CAs and those in {@code caFile} (PEM), if given. */
    public static SSLContext context(Optional<Path> caFile) throws IOException {
        try {
            List<X509TrustManager> managers = new ArrayList<>();
            managers.add(managerOf(null));
            if (caFile.isPresent()) {
                KeyStore extra = KeyStore.getInstance("PKCS12");
                extra.load(null, null);
                int n = 0;
                try (InputStream in = Files.newInputStream(caFile.get())) {
                    for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                        extra.setCertificateEntry("registry-ca-" + n++, c);
                    }
                } catch (CertificateException e) {
                    throw new IOException("registryCAFile " + caFile.get() + " holds no readable PEM certificate");
                }
                if (n == 0) {
                    throw new IOException("registryCAFile " + caFile.get() + " holds no certificate");
                }
                managers.add(managerOf(extra));
            }
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, new TrustManager[] {new Either(managers)}, null);
            return tls;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot set up TLS for registries: " + e.getMessage(), e);
        }
    }

    private static X509TrustManager managerOf(KeyStore store) throws GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(store);
        for (TrustManager m : f.getTrustManagers()) {
            if (m instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }

    /** Trusts a server any of its managers trusts. */
    private record Either(List<X509TrustManager> managers) implements X509TrustManager {

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            CertificateException last = null;
            for (X509TrustManager m : managers) {
                try {
                    m.checkServerTrusted(chain, authType);
                    return;
                } catch (CertificateException e) {
                    last = e;
                }
            }
            throw last;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("the registry client trusts no clients");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return managers.stream()
                    .flatMap(m -> java.util.Arrays.stream(m.getAcceptedIssuers()))
                    .toArray(X509Certificate[]::new);
        }
    }
}
