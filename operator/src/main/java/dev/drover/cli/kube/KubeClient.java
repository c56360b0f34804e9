package dev.drover.cli.kube;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small client of the Kubernetes API server on the JDK's {@link HttpClient}, with a {@link KubeTarget}'s TLS and
 * credentials (an exec plugin runs once, when the client is made). As client-go, credentials go over TLS only: to an
 * {@code http://} server none is sent and no exec plugin runs. HTTP/1.1: one request or two per call, and fewer
 * classes to load than HTTP/2. {@link #close} ends the JDK client's selector thread, which would otherwise keep the
 * JVM's exit waiting.
 */
public final class KubeClient implements AutoCloseable {

    /** As fabric8's default connection timeout. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private static final Duration THREADS_GONE = Duration.ofSeconds(1);
    /** Each request, as {@code kubectl -v=6} shows them; the plugin's -v shows these (INFO). */
    private static final Logger LOG = LoggerFactory.getLogger(KubeClient.class);

    private final KubeTarget target;
    private final HttpClient http;
    private final String authorization;
    private final boolean credentialsWithheld;
    private final String base;

    /**
     * An answer: its status, and its body to read (the caller closes it).
     *
     * @param within how long {@link #bytes} may take to read the whole body
     */
    public record Answer(int code, InputStream body, Duration within) implements AutoCloseable {
        /** The whole body, at most {@code max} bytes, read within {@link #within}; more, or later, is an IOException. */
        public byte[] bytes(int max) throws IOException {
            return Bodies.read(body, max, within);
        }

        @Override
        public void close() throws IOException {
            body.close();
        }
    }

    private KubeClient(KubeTarget target, HttpClient http, String authorization, boolean credentialsWithheld) {
        this.target = target;
        this.http = http;
        this.authorization = authorization;
        this.credentialsWithheld = credentialsWithheld;
        this.base = target.server().toString().replaceAll("/+$", "");
    }

    /**
     * A client for {@code target}; over TLS, runs its exec plugin, if it has one, for the credentials, each line the
     * plugin writes to its stderr (a login prompt, say) handed to {@code pluginSays} as it comes.
     */
    public static KubeClient open(KubeTarget target, Consumer<String> pluginSays) throws KubeconfigException {
        boolean tls = target.server().getScheme().equals("https");
        byte[] cert = target.clientCertPem();
        byte[] key = target.clientKeyPem();
        String token = target.token();
        String tokenSource = target.tokenSource();
        // checked whatever the scheme: a kubeconfig with a broken credential is said to be broken
        String authorization = Credentials.authorization(token, tokenSource, target);
        if (!tls) {
            cert = null;
            key = null;
            authorization = null;
            if (target.hasCredentials()) {
                LOG.info("the server {} is http: no credentials are sent to it (as kubectl)", target.serverText());
            }
        } else if (target.exec() != null && token == null && cert == null) {
            ExecPlugin.Credential c = ExecPlugin.run(target.exec(), pluginSays);
            cert = c.clientCertPem();
            key = c.clientKeyPem();
            authorization = c.token() == null
                    ? authorization
                    : Credentials.authorization(c.token(), "the exec plugin's token", target);
        }
        HttpClient.Builder builder = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .proxy(HttpClient.Builder.NO_PROXY);
        if (target.server().getScheme().equals("https")) {
            builder.sslContext(Tls.context(target.caPem(), target.insecure(), target.tlsServerName(), cert, key));
            SNIHostName sni = sni(target.tlsServerName());
            if (sni != null) {
                SSLParameters parameters = new SSLParameters();
                // sent as SNI when the server is an IP address (the JDK sends a host name's own)
                parameters.setServerNames(List.of(sni));
                builder.sslParameters(parameters);
            }
        }
        return new KubeClient(target, builder.build(), authorization, !tls && target.hasCredentials());
    }

    /**
     * tls-server-name as an SNI name; null when there is none, or it is no host name SNI can carry (an IP address,
     * '_', a trailing dot): the certificate must still carry it, only no SNI is sent.
     */
    private static SNIHostName sni(String serverName) {
        if (serverName == null) {
            return null;
        }
        try {
            return new SNIHostName(serverName);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Whether the kubeconfig gave credentials that were not sent, because the server is plain http: a refusal then
     * says so.
     */
    public boolean credentialsWithheld() {
        return credentialsWithheld;
    }

    public KubeTarget target() {
        return target;
    }

    /**
     * Sends {@code method} to {@code pathAndQuery} (from {@code /api} or {@code /apis}) with {@code body} (null: none)
     * and waits at most {@code timeout} for the answer to begin.
     */
    public Answer send(String method, String pathAndQuery, String contentType, byte[] body, Duration timeout)
            throws IOException, InterruptedException {
        return send(method, pathAndQuery, "application/json, */*", contentType, body, timeout);
    }

    /** As {@link #send(String, String, String, byte[], Duration)}, asking for the answer in {@code accept}. */
    public Answer send(
            String method, String pathAndQuery, String accept, String contentType, byte[] body, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder request;
        try {
            request = HttpRequest.newBuilder(URI.create(base + pathAndQuery))
                    .timeout(timeout)
                    .header("Accept", accept)
                    .method(
                            method,
                            body == null
                                    ? HttpRequest.BodyPublishers.noBody()
                                    : HttpRequest.BodyPublishers.ofByteArray(body));
            if (contentType != null) {
                request.header("Content-Type", contentType);
            }
            if (authorization != null) {
                request.header("Authorization", authorization);
            }
        } catch (IllegalArgumentException e) { // its message may quote the header's value: a credential
            throw new IOException("the request to " + base + " cannot be made (a header or the path is not valid)");
        }
        long start = System.nanoTime();
        HttpResponse<InputStream> response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        LOG.info(
                "{} {} {} in {} ms",
                method,
                base + pathAndQuery,
                response.statusCode(),
                (System.nanoTime() - start) / 1_000_000);
        return new Answer(response.statusCode(), response.body(), timeout);
    }

    /** Ends the JDK client and its selector thread (waits at most a second for it). */
    @Override
    public void close() {
        http.shutdownNow();
        try {
            http.awaitTermination(THREADS_GONE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
