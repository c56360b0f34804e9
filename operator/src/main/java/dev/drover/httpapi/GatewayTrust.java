package dev.drover.httpapi;

import dev.drover.common.UserText;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.X509TrustManager;

/**
 * Which caller is the Drover gateway: one whose token authenticates as {@code user} (the gateway's ServiceAccount)
 * over a connection that presented a client certificate, for client authentication, signed by the CA in
 * {@code caFile}. The token alone is not enough: every agent receives it, so a compromised node could replay it
 * against the others; the certificate's key never leaves the gateway. Only the gateway may name the user it asks
 * for ({@link AgentApi#ON_BEHALF_OF}) and download a disk without claiming it for a successor.
 * <p>
 * The file is read again whenever its content changes: the chart or cert-manager may replace the CA, and the
 * kubelet updates a ConfigMap volume in place. No user, or no file: no request is the gateway's.
 */
public final class GatewayTrust {

    /** A CA file larger than this is not a CA certificate. */
    static final int MAX_CA_FILE = 64 << 10;

    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

    private final String user;
    private final Path caFile;
    private final InstantSource clock;
    private byte[] readBytes;
    private Set<TrustAnchor> anchors = Set.of();

    /** {@code user}: the gateway's username; empty when this agent serves no gateway. */
    public GatewayTrust(Optional<String> user, Path caFile, InstantSource clock) {
        this.user = user.filter(u -> !u.isBlank()).orElse(null);
        this.caFile = caFile;
        this.clock = clock;
    }

    /** The username a gateway's token authenticates as, if this agent serves one. */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    public Path caFile() {
        return caFile;
    }

    /** Whether {@code caller}'s token is the gateway's (which needs the certificate as well: {@link #refusal}). */
    boolean names(KubernetesAuth.Caller caller) {
        return user != null && user.equals(caller.user());
    }

    /**
     * Whether {@code chain} is the gateway's certificate (this agent serving one), so its connection is a known
     * client's from the TLS handshake on; each request still shows the gateway's token.
     */
    boolean isGateways(X509Certificate[] chain) {
        return user != null && refusal(chain).isEmpty();
    }

    /**
     * Empty when {@code chain} (the connection's client certificates; null or empty: none) is the gateway's; else
     * why not, one sentence for a 401.
     */
    Optional<String> refusal(X509Certificate[] chain) {
        String token = "this token is the Drover gateway's (" + user + "), which the agent takes only over a"
                + " connection that presents the gateway's client certificate";
        if (chain == null || chain.length == 0) {
            return Optional.of(token + ", and this one presented none");
        }
        Set<TrustAnchor> now;
        try {
            now = anchors();
        } catch (IOException | GeneralSecurityException e) {
            return Optional.of(token + ", and the agent cannot read the gateway CA " + caFile + " ("
                    + UserText.bare(String.valueOf(e.getMessage())) + ")");
        }
        try {
            PKIXParameters parameters = new PKIXParameters(now);
            parameters.setRevocationEnabled(false);
            parameters.setDate(Date.from(clock.instant()));
            CertPathValidator.getInstance("PKIX")
                    .validate(
                            CertificateFactory.getInstance("X.509").generateCertPath(Arrays.asList(chain)), parameters);
            List<String> usages = chain[0].getExtendedKeyUsage();
            if (usages == null || !usages.contains(CLIENT_AUTH)) {
                return Optional.of(token + ", and this one is not for client authentication");
            }
        } catch (GeneralSecurityException e) {
            return Optional.of(token + ", and this one is not signed by the gateway CA in " + caFile);
        }
        return Optional.empty();
    }

    /** The CA certificates in the file now, parsed again only when its content changed. */
    private synchronized Set<TrustAnchor> anchors() throws IOException, GeneralSecurityException {
        // a ConfigMap volume's file is a link into the kubelet's own ..data directory: followed, it must be a file
        if (!Files.isRegularFile(caFile)) {
            throw new IOException("no such file");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(caFile)) {
            bytes = in.readNBytes(MAX_CA_FILE + 1);
        }
        if (bytes.length > MAX_CA_FILE) {
            throw new IOException("larger than " + MAX_CA_FILE + " bytes");
        }
        if (!Arrays.equals(bytes, readBytes)) {
            Set<TrustAnchor> read = new HashSet<>();
            for (var c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new java.io.ByteArrayInputStream(bytes))) {
                read.add(new TrustAnchor((X509Certificate) c, null));
            }
            if (read.isEmpty()) {
                throw new CertificateException("it holds no PEM certificate");
            }
            anchors = Set.copyOf(read);
            readBytes = bytes;
        }
        return anchors;
    }

    /**
     * The trust manager of the agent's TLS server: it takes any client certificate in the handshake (a refused one
     * would end the connection even of callers who need none) and {@link #refusal} checks it for the requests that
     * claim to be the gateway's, against the CA in the file now.
     */
    static X509TrustManager checkedPerRequest() {
        return new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
                // checked per request by GatewayTrust.refusal
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                throw new CertificateException("the agent's API is no TLS client");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
    }
}
