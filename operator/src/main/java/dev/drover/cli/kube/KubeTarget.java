package dev.drover.cli.kube;

import java.net.URI;

/**
 * Where the API server is and how to talk to it, as the kubeconfig's context says (files already read, paths
 * resolved). What the plugin's own client needs, and nothing it does not support.
 *
 * @param namespace the context's namespace; null when it names none
 * @param caPem the certificates to trust (PEM); null: the JDK's own roots
 * @param tlsServerName the name the server's certificate must carry instead of the server's host; null: the host
 * @param clientCertPem with {@code clientKeyPem}, the client certificate to present; null: none
 * @param token a bearer token (the user's token, its tokenFile's content, or --token); null: none
 * @param exec a credential plugin to run for a token or a client certificate; null: none
 */
public record KubeTarget(
        URI server,
        String context,
        String namespace,
        byte[] caPem,
        boolean insecure,
        String tlsServerName,
        byte[] clientCertPem,
        byte[] clientKeyPem,
        String token,
        String username,
        String password,
        ExecConfig exec) {

    /** The server as messages name it, with a trailing slash as fabric8's master URL had one. */
    public String serverText() {
        String s = server.toString();
        return s.endsWith("/") ? s : s + "/";
    }
}
