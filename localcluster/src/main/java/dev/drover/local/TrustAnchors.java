package dev.drover.local;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Collection;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/** Trust managers that accept exactly the chains leading to some given certificates, and nothing else. */
final class TrustAnchors {

    private TrustAnchors() {}

    /** The JDK's trust managers over {@code anchors} alone (none: every chain is refused). */
    static TrustManager[] of(Collection<? extends Certificate> anchors) throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        int i = 0;
        for (Certificate c : anchors) {
            store.setCertificateEntry("anchor-" + i++, c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        return tmf.getTrustManagers();
    }
}
