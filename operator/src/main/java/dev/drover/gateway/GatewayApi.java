package dev.drover.gateway;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.Refusal;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import dev.drover.httpapi.AgentClient;
import dev.drover.httpapi.KubernetesAuth;
import dev.drover.httpapi.TcpConnections;
import dev.drover.web.ConnectionBounds;
import dev.drover.web.Exchange;
import dev.drover.web.JettyHttps;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The aggregated API {@code agent.drover.dev/v1alpha1}, which the Kubernetes API server serves through this gateway:
 * {@code GET /apis/agent.drover.dev/v1alpha1/namespaces/NS/allocations/NAME/{log,stats,snapshot}}, {@code POST
 * .../signal} and the WebSocket {@code GET .../exec} ({@link GatewayExec}). Each request comes from the API server ({@link RequestHeaderAuth}), is authorized for the user it names
 * with a SubjectAccessReview ({@code get} on {@code allocations/SUBRESOURCE} of group {@code agent.drover.dev},
 * {@code create} for {@code allocations/signal}), and is then
 * asked of the agent on the allocation's node with the gateway's own token ({@link Backend}); the agent's answer is
 * streamed through as it comes. Errors are Kubernetes {@code Status} objects. {@code /healthz}, {@code /livez} and
 * {@code /readyz} need no certificate, and are also served on a port of their own, which a flood of connections to
 * the API's port cannot use up ({@link #CONNECTIONS}).
 */
public final class GatewayApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GatewayApi.class);

    /** Requests served at once; one more is answered 503 at once (the health checks are not counted). */
    public static final int MAX_REQUESTS = 512;

    /**
     * The connections the gateway holds: a connection becomes trusted once a request of it came from the API server
     * (its front-proxy certificate); until then it must send a head within 10 s and is one of at most 1024 untrusted
     * ones, the oldest of which makes way for a new one.
     */
    static final ConnectionBounds CONNECTIONS = ConnectionBounds.DEFAULT;

    /** The paths the health probes ask, also served on their own port. */
    static final java.util.Set<String> HEALTH = java.util.Set.of("/healthz", "/livez", "/readyz");

    /** How long a refused request is asked to wait. */
    static final java.time.Duration BUSY_RETRY = java.time.Duration.ofSeconds(1);

    /**
     * How often a streamed answer asks the kernel whether its client hung up ({@link TcpConnections}), as the agent
     * does for its own followers: a followed log of a quiet task writes nothing that would fail, and would otherwise
     * hold its thread, its agent connection and the agent's follow slot for as long as the task runs.
     */
    static final java.time.Duration PEER_CHECK = java.time.Duration.ofSeconds(2);

    /** Whether a user may {@code verb} a subresource of an allocation ({@link KubernetesAuth#authorize}). */
    public interface Authorizer extends GatewayExec.Rights {}

    /** Where allocations are read and their agents asked. */
    public interface Backend extends GatewayExec.Agents {
        /**
         * Asks the agent of {@code node} for {@code pathAndQuery} with {@code method} (GET, or POST without a body)
         * on behalf of {@code user}; 200's body to reader.
         */
        void ask(String node, String method, String pathAndQuery, String user, AgentClient.BodyReader<Void> reader)
                throws AgentClient.AgentException, IOException, InterruptedException;
    }

    private final JettyHttps server;
    private final RequestHeaderAuth authentication;
    private final Authorizer authorizer;
    private final Backend backend;
    private final GatewayExec exec;
    private final java.util.concurrent.Semaphore requests;
    private final TcpConnections connections;
    /** Agents' answers being streamed now, closed on {@link #close} so their threads end. */
    private final java.util.Set<InputStream> streaming = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private volatile boolean closed;

    private GatewayApi(
            InetSocketAddress address,
            InetSocketAddress probes,
            SSLContext tls,
            RequestHeaderAuth authentication,
            Authorizer authorizer,
            Backend backend,
            int maxRequests)
            throws IOException {
        this.requests = new java.util.concurrent.Semaphore(maxRequests);
        this.authentication = authentication;
        this.authorizer = authorizer;
        this.backend = backend;
        this.exec = new GatewayExec(authentication, authorizer, backend);
        // a client certificate is asked, not required: the health checks come without one
        this.server = JettyHttps.start(
                "gateway",
                address,
                128,
                CONNECTIONS,
                probes == null ? null : new JettyHttps.Probes(probes, HEALTH),
                tls,
                true,
                authentication::verifies,
                this::handle,
                List.of(new JettyHttps.Upgrade(AgentProtocol.GATEWAY_EXEC, exec)));
        this.connections = new TcpConnections(server.port());
    }

    /**
     * Serves on {@code address} (port 0: a free one) with {@code tls}, and the health checks also on {@code probes}
     * (null: not apart), which no client's connection uses up; requests run on virtual threads.
     */
    public static GatewayApi start(
            InetSocketAddress address,
            InetSocketAddress probes,
            SSLContext tls,
            RequestHeaderAuth authentication,
            Authorizer authorizer,
            Backend backend)
            throws IOException {
        return start(address, probes, tls, authentication, authorizer, backend, MAX_REQUESTS);
    }

    /** {@link #start}, serving at most {@code maxRequests} requests at once. */
    static GatewayApi start(
            InetSocketAddress address,
            InetSocketAddress probes,
            SSLContext tls,
            RequestHeaderAuth authentication,
            Authorizer authorizer,
            Backend backend,
            int maxRequests)
            throws IOException {
        return new GatewayApi(address, probes, tls, authentication, authorizer, backend, maxRequests);
    }

    /** Exec sessions the gateway may still relay (tests). */
    int execSessionsFree() {
        return exec.sessionsFree();
    }

    public int port() {
        return server.port();
    }

    /** The port of the health checks apart; -1 when they have none. */
    public int probePort() {
        return server.probePort();
    }

    /** Connections waiting for a request's head without having shown a known client's credentials. */
    int untrustedConnections() {
        return server.untrustedConnections();
    }

    private void handle(Exchange ex) {
        try {
            boolean health = HEALTH.contains(ex.rawPath());
            if (!health && !requests.tryAcquire()) {
                GatewayStatus.send(ex, 503, "the gateway is serving as many requests as it may; try again", BUSY_RETRY);
                return;
            }
            try {
                serve(ex);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (!ex.started()) {
                    GatewayStatus.send(ex, 503, "the gateway is shutting down");
                }
            } catch (RuntimeException e) {
                // what failed is for the gateway's log only: its class and message may tell internals
                LOG.warn("request {} failed", GatewayStatus.cut(ex.rawPath()), e);
                if (!ex.started()) {
                    GatewayStatus.send(ex, 500, "the gateway failed to answer; its log says why");
                }
            } finally {
                if (!health) {
                    requests.release();
                }
            }
        } catch (IOException clientGone) {
            LOG.debug("client went away: {}", clientGone.toString());
        }
    }

    private void serve(Exchange ex) throws IOException, InterruptedException {
        String path = ex.rawPath();
        switch (path) {
            case "/healthz", "/livez" -> {
                text(ex, 200, "ok");
                return;
            }
            case "/readyz" -> {
                boolean ready = authentication.loaded();
                text(ex, ready ? 200 : 503, ready ? "ok" : "the request-header settings are not read yet");
                return;
            }
            default -> {}
        }
        RequestHeaderAuth.Result who = authentication.authenticate(JettyHttps.peerCertificates(ex), ex.headers());
        if (who instanceof RequestHeaderAuth.Result.Refused r) {
            GatewayStatus.send(ex, r.status(), r.message());
            return;
        }
        JettyHttps.trust(ex);
        UserInfo user = ((RequestHeaderAuth.Result.Authenticated) who).user();
        Optional<byte[]> discovery = Discovery.document(path);
        if (discovery.isPresent() && !ex.method().equals("GET")) {
            GatewayStatus.send(ex, 405, ex.method() + " is not served for discovery; use GET");
            return;
        }
        if (discovery.isPresent()) {
            ex.send(200, "application/json", discovery.get());
            return;
        }
        GatewayRequest request;
        try {
            request = GatewayRequest.parse(path, ex.rawQuery());
        } catch (Refusal e) {
            GatewayStatus.send(ex, e.status(), e.getMessage());
            return;
        }
        if (!ex.method().equals(request.method())) {
            GatewayStatus.send(ex, 405, ex.method() + " is not served for this path; use " + request.method());
            return;
        }
        KubernetesAuth.Decision decision =
                authorizer.authorize(user, request.namespace(), request.name(), request.verb(), request.subresource());
        if (decision instanceof KubernetesAuth.Decision.Refused r) {
            GatewayStatus.send(ex, r.status(), r.message(), r.retryAfter());
            return;
        }
        if (request.subresource().equals("exec")) {
            // an upgrade never reaches here (GatewayExec takes it): a plain GET cannot carry a session
            GatewayStatus.send(
                    ex,
                    400,
                    "exec is a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Protocol: "
                            + dev.drover.execstream.Channels.V5 + "), as kubectl drover exec sends it");
            return;
        }
        forward(ex, request, user.getUsername());
    }

    private void forward(Exchange ex, GatewayRequest request, String user) throws IOException, InterruptedException {
        String id = request.namespace() + "/" + request.name();
        Optional<Allocation> found = backend.allocation(request.namespace(), request.name());
        if (found.isEmpty()) {
            GatewayStatus.send(ex, 404, "allocation " + id + " not found");
            return;
        }
        Allocation allocation = found.get();
        String node = allocation.getSpec() == null ? null : allocation.getSpec().getNodeName();
        if (node == null || node.isEmpty()) {
            GatewayStatus.send(ex, 503, "allocation " + id + " names no node");
            return;
        }
        String subresource;
        String contentType;
        switch (request.subresource()) {
            case "log" -> {
                List<String> tasks = allocation.getSpec().getTasks() == null
                        ? List.of()
                        : allocation.getSpec().getTasks().stream()
                                .map(Task::getName)
                                .toList();
                Optional<String> task = request.task();
                if (task.isEmpty() && tasks.size() != 1) {
                    GatewayStatus.send(
                            ex,
                            400,
                            "allocation " + id + " has " + tasks.size()
                                    + " tasks; name one with ?task=NAME (one of "
                                    + GatewayStatus.cut(String.join(", ", tasks))
                                    + ")");
                    return;
                }
                String name = task.orElse(tasks.getFirst());
                if (!tasks.contains(name)) {
                    GatewayStatus.send(
                            ex,
                            404,
                            "allocation " + id + " has no task \"" + name + "\" (its tasks: "
                                    + GatewayStatus.cut(String.join(", ", tasks)) + ")");
                    return;
                }
                subresource = "logs/" + AgentProtocol.encode(name) + request.query();
                contentType = "text/plain; charset=utf-8";
            }
            case "stats" -> {
                subresource = "stats";
                contentType = "application/json";
            }
            case "signal" -> {
                subresource = "signal" + request.query();
                contentType = "application/json";
            }
            default -> {
                subresource = "snapshot";
                contentType = "application/x-tar";
            }
        }
        try {
            String path = AgentProtocol.agentPath(request.namespace(), request.name(), subresource);
            backend.ask(node, request.method(), path, user, body -> {
                streaming.add(body);
                try {
                    if (closed) {
                        throw new IOException("the gateway is shutting down");
                    }
                    OutputStream out = ex.stream(200, contentType);
                    try (PeerWatch _ = new PeerWatch(ex, body)) {
                        copy(body, out);
                    }
                } finally {
                    streaming.remove(body);
                }
                return null;
            });
        } catch (AgentClient.AgentException e) {
            if (ex.started()) {
                throw new IOException("the agent's answer ended early: " + e.getMessage());
            }
            int code = switch (e.status()) {
                case 400, 404, 409, 429 -> e.status();
                case 0 -> 503;
                default -> 500;
            };
            GatewayStatus.send(ex, code, "the agent of node " + node + ": " + GatewayStatus.cut(e.getMessage(), 1024));
        }
    }

    /** Copies as it comes: a followed log is sent line by line, not when it ends. */
    private static void copy(InputStream in, OutputStream out) throws IOException {
        try (out) {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
        }
    }

    /**
     * While an answer is copied: asks the kernel every {@link #PEER_CHECK} whether the client hung up, and then
     * closes the agent's answer, so the copy ends and the agent's connection and follow slot are let go.
     */
    private final class PeerWatch implements AutoCloseable {
        private final Thread thread;

        PeerWatch(Exchange ex, InputStream body) {
            InetSocketAddress local = ex.localAddress();
            InetSocketAddress remote = ex.remoteAddress();
            thread = Thread.ofVirtual().name("gateway-peer-watch").start(() -> {
                try {
                    do {
                        Thread.sleep(PEER_CHECK);
                    } while (!connections.peerGone(local, remote));
                    LOG.debug("the client {} hung up; closing the agent's answer", remote);
                    body.close();
                } catch (InterruptedException done) {
                    // the copy ended first
                } catch (IOException e) {
                    LOG.debug("closing an agent's answer: {}", e.toString());
                }
            });
        }

        @Override
        public void close() {
            thread.interrupt();
            try {
                thread.join(); // at once: it sleeps, or reads a table
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void text(Exchange ex, int code, String text) throws IOException {
        ex.send(code, "text/plain; charset=utf-8", text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Stops serving: followed logs end, connections close. Joins the request threads. */
    @Override
    public void close() {
        closed = true;
        server.close();
        for (InputStream body : streaming) {
            try {
                body.close();
            } catch (IOException e) {
                LOG.debug("closing an agent's answer: {}", e.toString());
            }
        }
    }
}
