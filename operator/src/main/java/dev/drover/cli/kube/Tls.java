package dev.drover.cli.kube;

import dev.drover.kube.Pem;
import dev.drover.kube.PemException;
import dev.drover.kube.Trust;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The TLS a kubeconfig describes: the certificates to trust ({@code certificate-authority}, else the JDK's roots),
 * or none ({@code insecure-skip-tls-verify}), the name the server's certificate must carry ({@code tls-server-name},
 * else the host) and the client certificate to present. Whom to trust is {@link Trust}'s, as for the agent's own
 * client; this adds the client certificate.
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
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(keys, Trust.managers(caPem, "the kubeconfig's certificate-authority", insecure, serverName), null);
            return tls;
        } catch (PemException e) {
            throw new KubeconfigException(e.getMessage());
        } catch (GeneralSecurityException | IOException e) {
            throw new KubeconfigException("cannot set up TLS from the kubeconfig: " + e.getMessage());
        }
    }
}
