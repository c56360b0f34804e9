package dev.drover.httpapi;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.common.UserText;
import dev.drover.kube.NodeView;
import dev.drover.state.AllocId;
import dev.drover.web.ConnectionBounds;
import dev.drover.web.Exchange;
import dev.drover.web.JettyHttps;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's HTTPS API, which reads what only the node has, for one allocation this agent runs:
 * <ul>
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/logs/TASK?stream=stdout|stderr&tail=N&follow=true}: a task's
 * output (the last N lines, or all, then what it writes next until it is dead or the caller hangs up);
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/stats}: CPU, memory and device usage per task and for the whole
 * allocation ({@link UsageReport});
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/snapshot}: the ephemeral disk as a tar stream;
 * {@code ?successor=SNAME&uid=SUID} claims it first for that successor, which an agent on another node does to
 * migrate it ({@link Successors} decides who may; a disk claimed by another successor is a 409). Without
 * {@code successor} only the gateway may download it, for a user granted {@code allocations/snapshot}.
 * <li>{@code POST /v1/allocations/NAMESPACE/NAME/signal?task=TASK&signal=NAME}: sends a signal to a running task
 * ({@link SignalAction});
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/exec?task=TASK&command=...}, a WebSocket upgrade: runs a command in a
 * running task, its streams and exit on the channel protocol {@code kubectl exec} speaks ({@link ExecEndpoint}).
 * </ul>
 * Every request is authenticated and authorized by {@link KubernetesAuth} ({@code get} on the virtual
 * subresources {@code allocations/log}, {@code allocations/stats} and {@code allocations/snapshot}, {@code create}
 * on {@code allocations/signal} and {@code allocations/exec}: {@link AgentGate}); a request
 * with the gateway's token must come over a connection with the gateway's client certificate
 * ({@link GatewayTrust}, which the server asks every client for and nobody else needs); errors are
 * JSON {@code {"status": ..., "message": ...}} with their HTTP status. Followed logs are bounded in total and per
 * caller ({@link ApiLimits}), and one whose client hung up ends within {@link #PEER_CHECK}.
 */
public final class AgentApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentApi.class);

    private static final ObjectMapper JSON = new ObjectMapper();
    static final Duration FOLLOW_POLL = Duration.ofMillis(250);
    /** How often a follow with nothing to send asks whether its client is still there. */
    static final Duration PEER_CHECK = Duration.ofSeconds(2);
    /** What a caller refused a follow is told to wait: follows of others end as their tasks do, at any time. */
    static final Duration FOLLOW_RETRY = Followers.RETRY;
    /** Between the two readings of a task's CPU time from which its CPU percentage comes. */
    static final Duration STATS_WINDOW = Duration.ofMillis(250);

    /**
     * The connections the API holds: a connection is trusted once a request of it was let in ({@link AgentGate});
     * until then it must send a head within 10 s and is one of at most 512 untrusted ones, the oldest of which makes
     * way for a new one. Some 30 KB each
     * while they wait (17 500 took the agent past its 512 MiB); the health probes are the metrics port's.
     */
    static final ConnectionBounds CONNECTIONS =
            new ConnectionBounds(1024, 512, Duration.ofSeconds(10), Duration.ofSeconds(30));

    private final JettyHttps server;
    private final AgentGate gate;
    private final ExecEndpoint exec;
    private final Successors successors;
    private final String node;
    private final Clock clock;
    private final Duration statsWindow;
    private final Followers followers;
    private final TcpConnections connections;
    private volatile boolean closed;

    private AgentApi(
            AgentGate gate,
            ExecEndpoint exec,
            Successors successors,
            String node,
            Clock clock,
            Duration statsWindow,
            ApiLimits limits,
            java.util.function.Function<AgentApi, JettyHttps> serve) {
        this.gate = gate;
        this.exec = exec;
        this.successors = successors;
        this.followers = new Followers(limits);
        this.node = node;
        this.clock = clock;
        this.statsWindow = statsWindow;
        this.server = serve.apply(this);
        this.connections = new TcpConnections(server.port());
    }

    /**
     * Serves on {@code address} (port 0: a free one) with {@code tls}, within {@code limits}; requests run on
     * virtual threads.
     */
    public static AgentApi start(
            InetSocketAddress address,
            SSLContext tls,
            KubernetesAuth auth,
            GatewayTrust gateway,
            LocalAllocations allocations,
            Successors successors,
            String node,
            ApiLimits limits)
            throws IOException {
        return start(
                address, tls, auth, gateway, allocations, successors, node, Clock.systemUTC(), STATS_WINDOW, limits);
    }

    static AgentApi start(
            InetSocketAddress address,
            SSLContext tls,
            KubernetesAuth auth,
            GatewayTrust gateway,
            LocalAllocations allocations,
            Successors successors,
            String node,
            Clock clock,
            Duration statsWindow,
            ApiLimits limits)
            throws IOException {
        AgentGate gate = new AgentGate(auth, gateway, allocations, node);
        ExecEndpoint exec = new ExecEndpoint(gate, limits);
        try {
            // a client certificate is asked of everyone, needed only with the gateway's token (checked per request)
            return new AgentApi(gate, exec, successors, node, clock, statsWindow, limits, api -> {
                try {
                    return JettyHttps.start(
                            "agent-api",
                            address,
                            64,
                            CONNECTIONS,
                            null,
                            tls,
                            true,
                            gateway::isGateways,
                            api::handle,
                            List.of(new JettyHttps.Upgrade(AgentProtocol.AGENT_EXEC, exec)));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    public int port() {
        return server.port();
    }

    /** How many exec sessions run now. */
    int execSessions() {
        return exec.sessions();
    }

    /** How many followed logs are served now. */
    int followers() {
        return followers.count();
    }

    /** Connections waiting for a request's head without having shown a known client's credentials. */
    int untrustedConnections() {
        return server.untrustedConnections();
    }

    /**
     * Where clients dial a node's agent: its {@code InternalIP} addresses, then its {@code ExternalIP} ones, as the
     * Node lists them (the certificate names them all).
     */
    public static List<String> addresses(Node node) {
        List<NodeAddress> all = node.getStatus() == null || node.getStatus().getAddresses() == null
                ? List.of()
                : node.getStatus().getAddresses();
        return NodeView.dialled(all.stream()
                .map(a -> new NodeView.Address(a.getType(), a.getAddress()))
                .toList());
    }

    private void handle(Exchange ex) {
        try {
            try {
                serve(ex);
            } catch (RuntimeException e) {
                // a bug, not the client's doing: say so rather than drop the connection without a word
                LOG.warn("API request {} failed", ex.target(), e);
                if (!ex.started()) {
                    error(ex, 500, "the agent failed to answer: " + e);
                }
            }
        } catch (IOException clientGone) {
            LOG.debug("API client went away: {}", clientGone.toString());
        }
    }

    private void serve(Exchange ex) throws IOException {
        AgentGate.Entry entry = gate.admit(new AgentGate.Asked(
                ex.method(),
                ex.rawPath(),
                ex.rawQuery(),
                ex.header("Authorization"),
                ex.header(AgentProtocol.ON_BEHALF_OF),
                ex.remoteAddress().getAddress(),
                JettyHttps.peerCertificates(ex)));
        if (entry instanceof AgentGate.Refused r) {
            error(ex, r.status(), r.message(), r.retryAfter());
            return;
        }
        JettyHttps.trust(ex);
        AgentGate.Admitted admitted = (AgentGate.Admitted) entry;
        ApiRequest request = admitted.request();
        AllocId id = request.id();
        LocalAllocation local = admitted.local();
        String user = admitted.user();
        switch (request.subresource()) {
            case "log" -> logs(ex, id, local, request.logs(), user);
            case "stats" -> stats(ex, id, local);
            case "signal" -> signal(ex, id, local, request.signal(), user);
            case "exec" ->
                error(
                        ex,
                        400,
                        "exec is a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Protocol: "
                                + dev.drover.execstream.Channels.V5 + ")");
            default ->
                snapshot(
                        ex,
                        id,
                        local,
                        admitted.caller(),
                        admitted.fromGateway(),
                        request.successor(),
                        JettyHttps.peerCertificates(ex));
        }
    }

    private void logs(Exchange ex, AllocId id, LocalAllocation local, ApiRequest.Logs request, String caller)
            throws IOException {
        if (!local.tasks().contains(request.task())) {
            error(ex, 404, "allocation " + id + " has no task \"" + request.task() + "\"");
            return;
        }
        LogFiles files = new LogFiles(local.logsDir(), request.task(), request.stream());
        if (!request.follow()) {
            try (OutputStream out = ex.stream(200, "text/plain; charset=utf-8")) {
                files.tail(request.tail(), out);
            }
            return;
        }
        Followers.Admission admission = followers.admit(caller, id.namespace());
        if (admission.slot().isEmpty()) {
            error(ex, 429, admission.refusal(), FOLLOW_RETRY);
            return;
        }
        try (Followers.Slot _ = admission.slot().get()) {
            try (OutputStream out = ex.stream(200, "text/plain; charset=utf-8")) {
                long position = files.tail(request.tail(), out);
                BooleanSupplier departed = peerGone(ex.localAddress(), ex.remoteAddress());
                files.follow(
                        position,
                        out,
                        () -> closed || local.dead(request.task()) || departed.getAsBoolean(),
                        FOLLOW_POLL);
            }
        }
    }

    /**
     * Whether the client of a follow hung up, asked of the kernel every {@link #PEER_CHECK}: a quiet task writes
     * nothing that would fail, so without asking the follow would last as long as its task.
     */
    private BooleanSupplier peerGone(InetSocketAddress local, InetSocketAddress remote) {
        long[] next = {System.nanoTime() + PEER_CHECK.toNanos()};
        return () -> {
            if (System.nanoTime() - next[0] < 0) {
                return false;
            }
            next[0] = System.nanoTime() + PEER_CHECK.toNanos();
            boolean gone = connections.peerGone(local, remote);
            if (gone) {
                LOG.debug("the client {} of a followed log hung up", remote);
            }
            return gone;
        };
    }

    private void stats(Exchange ex, AllocId id, LocalAllocation local) throws IOException {
        byte[] body;
        try {
            body = JSON.writerWithDefaultPrettyPrinter()
                    .writeValueAsBytes(UsageReport.collect(id, node, local, clock, statsWindow));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error(ex, 503, "the agent is shutting down");
            return;
        }
        ex.send(200, "application/json", body);
    }

    private void signal(Exchange ex, AllocId id, LocalAllocation local, ApiRequest.Signal request, String user)
            throws IOException {
        SignalAction.Answer answer = SignalAction.send(id, local, request, user);
        if (answer.status() != 200) {
            error(ex, answer.status(), answer.message());
            return;
        }
        LOG.info("{} sent {} to task {} of {}", UserText.bare(user), request.signal(), request.task(), id);
        json(ex, 200, Map.of("task", request.task(), "signal", request.signal(), "message", answer.message()));
    }

    private void snapshot(
            Exchange ex,
            AllocId id,
            LocalAllocation local,
            KubernetesAuth.Caller caller,
            boolean fromGateway,
            ApiRequest.Successor successor,
            X509Certificate[] clientCertificates)
            throws IOException {
        if (successor == null && !fromGateway) {
            // an agent's own right to allocations/snapshot is for migrating a disk to its node, nothing more
            error(
                    ex,
                    403,
                    "only the Drover gateway downloads a disk as it is; \"" + caller.user() + "\" may only claim it"
                            + " for a successor bound to its node (?successor=NAME&uid=UID), and users download it"
                            + " through the aggregated API agent.drover.dev");
            return;
        }
        if (successor != null) {
            Optional<KubernetesAuth.Decision.Refused> refused =
                    successors.check(caller, id, successor, clientCertificates);
            if (refused.isPresent()) {
                error(ex, refused.get().status(), refused.get().message());
                return;
            }
            try {
                local.claimDisk(new Claimant(successor.name(), successor.uid()));
            } catch (DiskClaimedException e) {
                error(ex, 409, e.getMessage());
                return;
            } catch (IOException e) {
                LOG.warn("cannot claim the disk of {} for {}: {}", id, successor.name(), e.toString());
                error(ex, 500, "the agent cannot claim the disk of " + id + ": " + e.getMessage());
                return;
            }
            LOG.info("the disk of {} is claimed by {} on node {}", id, successor.name(), caller.node());
        }
        OutputStream tar = ex.stream(200, "application/x-tar");
        try (tar) {
            local.snapshot(tar);
        } catch (IOException e) {
            // the stream ends without its end-of-archive blocks, which the reader refuses as cut short
            LOG.warn("snapshot of {} ended early: {}", id, e.toString());
            throw e;
        }
    }

    private static void error(Exchange ex, int status, String message) throws IOException {
        error(ex, status, message, Duration.ZERO);
    }

    /** {@code retryAfter}, when not zero, goes out as {@code Retry-After} in whole seconds. */
    private static void error(Exchange ex, int status, String message, Duration retryAfter) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("message", message);
        ex.send(status, "application/json", JSON.writeValueAsBytes(body), retryAfter);
    }

    private static void json(Exchange ex, int status, Map<String, Object> body) throws IOException {
        ex.send(status, "application/json", JSON.writeValueAsBytes(body));
    }

    /** Stops serving: followed logs and exec sessions end, connections close. Joins the request threads. */
    @Override
    public void close() {
        closed = true;
        exec.close();
        server.close();
    }
}
