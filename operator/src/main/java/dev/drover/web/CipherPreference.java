package dev.drover.web;

import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The order in which a TLS client of the agent offers its cipher suites. The agent's JVM compiles with C1 only
 * ({@code -XX:TieredStopAtLevel=1} in its options), and C1 has no intrinsics for AES or GHASH: AES-GCM runs as plain
 * Java, about 12 MB/s a core on the benchmark machine against 35-60 MB/s for ChaCha20-Poly1305, and every byte of
 * every watch, list and write between the agent and the API server goes through it. Without C2, the ChaCha20-Poly1305
 * suites are offered first; the suites offered are the JVM's default set, in its order otherwise, so every server
 * the agent could talk to before it still can. A server that goes by its client's preference uses them: Go's
 * {@code crypto/tls} (kube-apiserver's) picks ChaCha20-Poly1305 when the client lists it first.
 */
public final class CipherPreference {

    private CipherPreference() {}

    /** TLS parameters for a client of this JVM: TLS 1.3 and 1.2, with the suites in the order above. */
    public static SSLParameters forClients() {
        SSLParameters p = new SSLParameters();
        p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
        p.setCipherSuites(ordered(defaultSuites(), !hasC2()).toArray(String[]::new));
        return p;
    }

    /** {@code suites} with the ChaCha20-Poly1305 ones first when {@code chachaFirst}, each group in its order. */
    static List<String> ordered(List<String> suites, boolean chachaFirst) {
        if (!chachaFirst) {
            return List.copyOf(suites);
        }
        List<String> first = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        for (String s : suites) {
            (s.contains("CHACHA20") ? first : rest).add(s);
        }
        first.addAll(rest);
        return List.copyOf(first);
    }

    private static List<String> defaultSuites() {
        try {
            return List.of(SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has a default TLS context", e);
        }
    }

    /** Whether this JVM compiles with C2 (whose AES and GHASH intrinsics make AES-GCM the cheaper cipher). */
    static boolean hasC2() {
        return VmOptions.value("TieredStopAtLevel")
                .map(level -> !level.equals("1") && !level.equals("2") && !level.equals("3"))
                .orElse(true);
    }
}
