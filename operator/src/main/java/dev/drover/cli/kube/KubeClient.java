package dev.drover.cli.kube;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small client of the Kubernetes API server on the JDK's {@link HttpClient}, with a {@link KubeTarget}'s TLS and
 * credentials (an exec plugin runs once, when the client is made). HTTP/1.1: one request or two per call, and fewer
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
    private final String base;

    /** An answer: its status, and its body to read (the caller closes it). */
    public record Answer(int code, InputStream body) implements AutoCloseable {
        /** The whole body, at most {@code max} bytes; more is an IOException. */
        public byte[] bytes(int max) throws IOException {
            byte[] bytes = body.readNBytes(max + 1);
            if (bytes.length > max) {
                throw new IOException("the answer is larger than " + (max >> 20) + " MiB");
            }
            return bytes;
        }

        @Override
        public void close() throws IOException {
            body.close();
        }
    }

    private KubeClient(KubeTarget target, HttpClient http, String authorization) {
        this.target = target;
        this.http = http;
        this.authorization = authorization;
        this.base = target.server().toString().replaceAll("/+$", "");
    }

    /** A client for {@code target}; runs its exec plugin, if it has one, for the credentials. */
    public static KubeClient open(KubeTarget target) throws KubeconfigException {
        byte[] cert = target.clientCertPem();
        byte[] key = target.clientKeyPem();
        String token = target.token();
        if (target.exec() != null && token == null && cert == null) {
            ExecPlugin.Credential c = ExecPlugin.run(target.exec());
            token = c.token();
            cert = c.clientCertPem();
            key = c.clientKeyPem();
        }
        HttpClient.Builder builder = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .proxy(HttpClient.Builder.NO_PROXY);
        if (target.server().getScheme().equals("https")) {
            builder.sslContext(Tls.context(target.caPem(), target.insecure(), target.tlsServerName(), cert, key));
            if (target.tlsServerName() != null) {
                SSLParameters parameters = new SSLParameters();
                // sent as SNI when the server is an IP address (the JDK sends a host name's own)
                parameters.setServerNames(List.of(new SNIHostName(target.tlsServerName())));
                builder.sslParameters(parameters);
            }
        }
        String authorization = null;
        if (token != null) {
            authorization = "Bearer " + token;
        } else if (target.username() != null && target.password() != null) {
            authorization = "Basic "
                    + Base64.getEncoder()
                            .encodeToString(
                                    (target.username() + ":" + target.password()).getBytes(StandardCharsets.UTF_8));
        }
        return new KubeClient(target, builder.build(), authorization);
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
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + pathAndQuery))
                .timeout(timeout)
                .header("Accept", "application/json, */*")
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
        long start = System.nanoTime();
        HttpResponse<InputStream> response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        LOG.info(
                "{} {} {} in {} ms",
                method,
                base + pathAndQuery,
                response.statusCode(),
                (System.nanoTime() - start) / 1_000_000);
        return new Answer(response.statusCode(), response.body());
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
