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
 * @param tokenSource where {@code token} came from, as an error names it ({@code --token}, {@code the kubeconfig's
 *     user "u" token}, {@code the tokenFile /path}): never the token itself; null when there is no token
 * @param userSource where {@code username} and {@code password} came from ({@code the kubeconfig's user "u"})
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
        ExecConfig exec,
        String tokenSource,
        String userSource) {

    /** Whether this target names a credential of any kind (a token, a password, a client certificate, a plugin). */
    public boolean hasCredentials() {
        return token != null || username != null || password != null || clientCertPem != null || exec != null;
    }

    /** The server as messages name it, with a trailing slash as fabric8's master URL had one. */
    public String serverText() {
        String s = server.toString();
        return s.endsWith("/") ? s : s + "/";
    }
}
