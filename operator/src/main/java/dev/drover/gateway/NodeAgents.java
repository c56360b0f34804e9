package dev.drover.gateway;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.httpapi.AgentClient;
import dev.drover.web.ClientSocket;
import dev.drover.web.MessageReceiver;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.X509KeyManager;

/**
 * The gateway's {@link GatewayApi.Backend}: reads allocations with the gateway's ServiceAccount, and asks a node's
 * agent (found and pinned by {@link AgentClient#find}) with the gateway's own peer token, a projected token of
 * audience {@code drover.dev/agent} that the kubelet rotates; it is read from its file at each use. The agent takes
 * that token only with the gateway's client certificate ({@code clientKeys}), which a node that receives the token
 * does not have. The user's credentials never leave the API server.
 */
final class NodeAgents implements GatewayApi.Backend {

    /** A token file larger than this is not a token. */
    static final int MAX_TOKEN = 64 << 10;
    /** How long an agent may take to begin its answer (stats take a quarter of a second to measure CPU). */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

    private final KubernetesClient client;
    private final Path tokenFile;
    private final X509KeyManager clientKeys;

    NodeAgents(KubernetesClient client, Path tokenFile, X509KeyManager clientKeys) {
        this.client = client;
        this.tokenFile = tokenFile;
        this.clientKeys = clientKeys;
    }

    @Override
    public Optional<Allocation> allocation(String namespace, String name) {
        return Optional.ofNullable(client.resources(Allocation.class)
                .inNamespace(namespace)
                .withName(name)
                .get());
    }

    @Override
    public void ask(String node, String method, String pathAndQuery, String user, AgentClient.BodyReader<Void> reader)
            throws AgentClient.AgentException, IOException, InterruptedException {
        String token;
        try {
            token = token(tokenFile);
        } catch (IOException e) {
            throw new AgentClient.AgentException("the gateway cannot read its token: " + e.getMessage(), 500);
        }
        AgentClient.Endpoint agent = AgentClient.find(client, node);
        AgentClient.send(
                agent,
                method,
                pathAndQuery,
                token,
                clientKeys,
                Map.of(AgentProtocol.ON_BEHALF_OF, AgentProtocol.encode(user)),
                ANSWER_TIMEOUT,
                reader);
    }

    @Override
    public ClientSocket exec(
            String node, String pathAndQuery, String user, List<String> protocols, MessageReceiver receiver)
            throws AgentClient.AgentException, InterruptedException {
        String token;
        try {
            token = token(tokenFile);
        } catch (IOException e) {
            throw new AgentClient.AgentException("the gateway cannot read its token: " + e.getMessage(), 500);
        }
        return AgentClient.openExec(
                AgentClient.find(client, node),
                pathAndQuery,
                token,
                clientKeys,
                Map.of(AgentProtocol.ON_BEHALF_OF, AgentProtocol.encode(user)),
                protocols,
                receiver);
    }

    /** The token in {@code file}: a regular file, at most {@link #MAX_TOKEN} bytes, trimmed. */
    static String token(Path file) throws IOException {
        // the kubelet writes a projected token through a link of its own (..data/token): followed, it must be a file
        if (!Files.isRegularFile(file)) {
            throw new IOException(file + " is not a file");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_TOKEN + 1);
        }
        if (bytes.length > MAX_TOKEN) {
            throw new IOException(file + " is larger than " + MAX_TOKEN + " bytes");
        }
        String token = new String(bytes, StandardCharsets.UTF_8).trim();
        if (token.isEmpty() || token.chars().anyMatch(c -> c <= ' ' || c >= 127)) {
            throw new IOException(file + " holds no token");
        }
        return token;
    }
}
