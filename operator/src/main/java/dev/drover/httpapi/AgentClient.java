package dev.drover.httpapi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.agentapi.AgentProtocol;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLHandshakeException;

/**
 * The client of another node's agent API, for {@code kubectl drover} and for an agent fetching a snapshot to
 * migrate: finds the agent from its Node (address, the published port and certificate fingerprint), trusts
 * exactly that certificate, and sends the caller's bearer token.
 */
public final class AgentClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** Why the agent could not be found or asked; the message is for a user, as it is. */
    public static final class AgentException extends Exception {
        private final int status;

        public AgentException(String message, int status) {
            super(message);
            this.status = status;
        }

        AgentException(String message) {
            this(message, 0);
        }

        /** The HTTP status the agent answered, or 0 when it did not answer. */
        public int status() {
            return status;
        }
    }

    /** Where a node's agent serves, and the certificate it must present. */
    public record Endpoint(String node, URI base, String fingerprint) {}

    /** Reads a successful response's body; it is closed afterwards. */
    public interface BodyReader<T> {
        T read(InputStream body) throws IOException;
    }

    private AgentClient() {}

    /**
     * The agent on {@code nodeName}: dialled at the Node's first {@code InternalIP} (else {@code ExternalIP}); a
     * Node that lists no address (the local dev cluster's) is dialled at the API server's host.
     */
    public static Endpoint find(KubernetesClient client, String nodeName) throws AgentException {
        Node node;
        try {
            node = nodeName == null ? null : client.nodes().withName(nodeName).get();
        } catch (KubernetesClientException e) {
            throw new AgentException("cannot read node " + nodeName + ": " + e.getMessage());
        }
        if (node == null) {
            throw new AgentException("node \"" + nodeName + "\" does not exist");
        }
        Map<String, String> annotations = node.getMetadata().getAnnotations() == null
                ? Map.of()
                : node.getMetadata().getAnnotations();
        String port = annotations.get(AgentProtocol.PORT_ANNOTATION);
        String fingerprint = annotations.get(AgentProtocol.CERTIFICATE_ANNOTATION);
        if (port == null || fingerprint == null || !port.matches("[0-9]{1,5}")) {
            throw new AgentException("node " + nodeName + " publishes no agent API (is the agent running there, with"
                    + " apiPort set?)");
        }
        List<String> addresses = AgentApi.addresses(node);
        String host = addresses.isEmpty()
                ? URI.create(client.getConfiguration().getMasterUrl()).getHost()
                : addresses.getFirst();
        if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return new Endpoint(nodeName, URI.create("https://" + host + ":" + port), fingerprint);
    }

    /** The bearer token a client configuration sends (an exec plugin's or the kubeconfig's), or null. */
    public static String bearerToken(Config config) {
        return config.getAutoOAuthToken() != null ? config.getAutoOAuthToken() : config.getOauthToken();
    }

    /**
     * GETs {@code pathAndQuery} from the agent with {@code token}, and hands a 200's body to {@code reader}. Any
     * other answer throws with the agent's message; so do a certificate other than the published one and an agent
     * that cannot be reached.
     *
     * @param timeout for the response to begin (not for the whole body: a followed log has no end)
     */
    public static <T> T get(Endpoint agent, String pathAndQuery, String token, Duration timeout, BodyReader<T> reader)
            throws AgentException, IOException, InterruptedException {
        return get(agent, pathAndQuery, token, Map.of(), timeout, reader);
    }

    /** As {@link #get(Endpoint, String, String, Duration, BodyReader)}, sending {@code headers} as well. */
    public static <T> T get(
            Endpoint agent,
            String pathAndQuery,
            String token,
            Map<String, String> headers,
            Duration timeout,
            BodyReader<T> reader)
            throws AgentException, IOException, InterruptedException {
        return get(agent, pathAndQuery, token, null, headers, timeout, reader);
    }

    /**
     * As {@link #get(Endpoint, String, String, Map, Duration, BodyReader)}, presenting the client certificate of
     * {@code clientKeys} (null: none), as the gateway does.
     */
    public static <T> T get(
            Endpoint agent,
            String pathAndQuery,
            String token,
            KeyManager clientKeys,
            Map<String, String> headers,
            Duration timeout,
            BodyReader<T> reader)
            throws AgentException, IOException, InterruptedException {
        return send(agent, "GET", pathAndQuery, token, clientKeys, headers, timeout, reader);
    }

    /**
     * As {@link #get(Endpoint, String, String, KeyManager, Map, Duration, BodyReader)}, with {@code method}: GET, or
     * POST without a body (a signal, whose parameters are in the query).
     */
    public static <T> T send(
            Endpoint agent,
            String method,
            String pathAndQuery,
            String token,
            KeyManager clientKeys,
            Map<String, String> headers,
            Duration timeout,
            BodyReader<T> reader)
            throws AgentException, IOException, InterruptedException {
        URI target = agent.base().resolve(pathAndQuery);
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT);
        try {
            builder.sslContext(Pinning.to(agent.fingerprint(), clientKeys));
        } catch (GeneralSecurityException e) {
            throw new AgentException("cannot set up TLS: " + e.getMessage());
        }
        try (HttpClient http = builder.build()) {
            HttpResponse<InputStream> r;
            try {
                HttpRequest.Builder request =
                        HttpRequest.newBuilder(target).timeout(timeout).header("Authorization", "Bearer " + token);
                request.method(method, HttpRequest.BodyPublishers.noBody());
                headers.forEach(request::header);
                r = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (SSLHandshakeException e) {
                throw new AgentException("the agent at " + target.getAuthority() + " is not the one node "
                        + agent.node() + " names: " + e.getMessage());
            } catch (IOException e) {
                throw new AgentException(
                        "cannot reach the agent of node " + agent.node() + " at " + target.getAuthority() + ": " + e);
            }
            try (InputStream body = r.body()) {
                if (r.statusCode() != 200) {
                    String text = refusal(body, timeout);
                    throw new AgentException(message(text) + " (HTTP " + r.statusCode() + ")", r.statusCode());
                }
                return reader.read(body);
            }
        }
    }

    /** The most of a refusal's body that is read. */
    private static final int MAX_REFUSAL_BYTES = 64 << 10;

    /**
     * What a refusal's body says: at most {@link #MAX_REFUSAL_BYTES}, read within {@code timeout} (the request's
     * timeout covers only the wait for the headers), so a peer that begins a refusal and never ends it holds no one.
     * Closing the stream at the deadline ends the read; what came by then is what is shown.
     */
    private static String refusal(InputStream body, Duration timeout) throws InterruptedException {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        Thread deadline = Thread.ofVirtual().name("agent-refusal-deadline").start(() -> {
            try {
                Thread.sleep(timeout);
                body.close();
            } catch (InterruptedException | IOException done) {
                // read in time, or already closed
            }
        });
        try {
            byte[] buffer = new byte[8192];
            for (int n;
                    text.size() < MAX_REFUSAL_BYTES
                            && (n = body.read(buffer, 0, Math.min(buffer.length, MAX_REFUSAL_BYTES - text.size())))
                                    >= 0; ) {
                text.write(buffer, 0, n);
            }
        } catch (IOException cut) {
            // closed at the deadline, or the connection broke: what came is what is shown
        } finally {
            deadline.interrupt();
            deadline.join();
        }
        return text.toString(StandardCharsets.UTF_8);
    }

    /**
     * Opens an exec WebSocket ({@code pathAndQuery} names it) on the agent with {@code token}, presenting the client
     * certificate of {@code clientKeys} (null: none) and offering {@code protocols}; {@code receiver} hears what the
     * agent sends. A refusal throws with the agent's message and status.
     */
    public static dev.drover.web.ClientSocket openExec(
            Endpoint agent,
            String pathAndQuery,
            String token,
            KeyManager clientKeys,
            Map<String, String> headers,
            List<String> protocols,
            dev.drover.web.MessageReceiver receiver)
            throws AgentException, InterruptedException {
        URI target = URI.create("wss://" + agent.base().getRawAuthority()).resolve(pathAndQuery);
        HttpClient http;
        try {
            http = HttpClient.newBuilder()
                    .connectTimeout(CONNECT_TIMEOUT)
                    .sslContext(Pinning.to(agent.fingerprint(), clientKeys))
                    .build();
        } catch (GeneralSecurityException e) {
            throw new AgentException("cannot set up TLS: " + e.getMessage());
        }
        Map<String, String> all = new java.util.LinkedHashMap<>(headers);
        all.put("Authorization", "Bearer " + token);
        try {
            return dev.drover.web.ClientSocket.openOwning(http, target, all, protocols, receiver, CONNECT_TIMEOUT);
        } catch (dev.drover.web.ClientSocket.Refused e) {
            throw new AgentException(message(e.body()) + " (HTTP " + e.status() + ")", e.status());
        } catch (IOException e) {
            throw new AgentException(
                    "cannot reach the agent of node " + agent.node() + " at " + target.getAuthority() + ": " + e);
        }
    }

    /** The message of the agent's JSON error, or the text as it is. */
    private static String message(String text) {
        try {
            JsonNode error = JSON.readTree(text);
            return error.path("message").asText(text);
        } catch (IOException e) {
            return text;
        }
    }
}
