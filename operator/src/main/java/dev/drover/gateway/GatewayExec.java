package dev.drover.gateway;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.ExecUpgrade;
import dev.drover.agentapi.Refusal;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import dev.drover.execstream.ExecSession;
import dev.drover.httpapi.AgentClient;
import dev.drover.httpapi.KubernetesAuth;
import dev.drover.web.ClientSocket;
import dev.drover.web.JettyHttps;
import dev.drover.web.MessageReceiver;
import dev.drover.web.MessageSocket;
import dev.drover.web.Relay;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET .../namespaces/NS/allocations/NAME/exec?task=TASK&command=...}, the WebSocket upgrade {@code kubectl
 * drover exec} sends through the API server: authenticated as every request ({@link RequestHeaderAuth}), authorized
 * for {@code create} on {@code allocations/exec} (kube-apiserver let the GET through for {@code get}), then relayed
 * message by message ({@link Relay}) to an exec WebSocket the gateway opens on the allocation's agent with its own
 * token and certificate. The user's upgrade is accepted only once the agent accepted its own, so every refusal, the
 * agent's too, is a plain {@code Status}.
 */
final class GatewayExec extends ExecUpgrade {

    private static final Logger LOG = LoggerFactory.getLogger(GatewayExec.class);
    /** Exec sessions relayed at once; each holds two connections and a few virtual threads. */
    static final int MAX_SESSIONS = 512;
    /** Exec sessions one user may have relayed at once, so that one user cannot take them all. */
    static final int MAX_SESSIONS_PER_USER = 32;
    /** How long the user's side of a session may take to open once the agent's opened. */
    static final java.time.Duration USER_OPENS = java.time.Duration.ofSeconds(30);

    /** Whether a user may {@code verb} a subresource of an allocation. */
    public interface Rights {
        KubernetesAuth.Decision authorize(
                UserInfo user, String namespace, String name, String verb, String subresource);
    }

    /** Where allocations are read and their agents' exec sockets opened. */
    public interface Agents {
        Optional<Allocation> allocation(String namespace, String name);

        /**
         * Opens an exec WebSocket on the agent of {@code node} ({@code pathAndQuery} names it) on behalf of {@code
         * user}, offering {@code protocols}; {@code receiver} hears what the agent sends.
         */
        ClientSocket exec(
                String node, String pathAndQuery, String user, List<String> protocols, MessageReceiver receiver)
                throws AgentClient.AgentException, InterruptedException;
    }

    private final RequestHeaderAuth authentication;
    private final Rights authorizer;
    private final Agents backend;
    private final Semaphore sessions = new Semaphore(MAX_SESSIONS);
    /** Sessions open per user, users with none left out. */
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> perUser =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final java.time.Duration userOpens;

    GatewayExec(RequestHeaderAuth authentication, Rights authorizer, Agents backend) {
        this(authentication, authorizer, backend, USER_OPENS);
    }

    /** {@code userOpens}: how long the user's side has to open once the agent's has. */
    GatewayExec(RequestHeaderAuth authentication, Rights authorizer, Agents backend, java.time.Duration userOpens) {
        super(LOG, "the gateway failed to open the exec session; its log says why");
        this.userOpens = userOpens;
        this.authentication = authentication;
        this.authorizer = authorizer;
        this.backend = backend;
    }

    @Override
    protected FrameHandler open(ServerUpgradeRequest request, ServerUpgradeResponse response) throws Refusal {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (HttpField field : request.getHeaders()) {
            headers.computeIfAbsent(field.getName(), n -> new ArrayList<>()).add(field.getValue());
        }
        RequestHeaderAuth.Result who = authentication.authenticate(JettyHttps.peerCertificates(request), headers);
        if (who instanceof RequestHeaderAuth.Result.Refused r) {
            throw new Refusal(r.status(), r.message());
        }
        UserInfo user = ((RequestHeaderAuth.Result.Authenticated) who).user();
        List<String> protocols = ExecUpgrade.protocols(request);
        GatewayRequest exec = GatewayRequest.parse(
                request.getHttpURI().getPath(), request.getHttpURI().getQuery());
        KubernetesAuth.Decision decision =
                authorizer.authorize(user, exec.namespace(), exec.name(), exec.verb(), exec.subresource());
        if (decision instanceof KubernetesAuth.Decision.Refused r) {
            throw new Refusal(r.status(), r.message());
        }
        String id = exec.namespace() + "/" + exec.name();
        Optional<Allocation> found = backend.allocation(exec.namespace(), exec.name());
        if (found.isEmpty()) {
            throw new Refusal(404, "allocation " + id + " not found");
        }
        String node =
                found.get().getSpec() == null ? null : found.get().getSpec().getNodeName();
        if (node == null || node.isEmpty()) {
            throw new Refusal(503, "allocation " + id + " names no node");
        }
        List<String> tasks = found.get().getSpec().getTasks() == null
                ? List.of()
                : found.get().getSpec().getTasks().stream().map(Task::getName).toList();
        String task = exec.task().orElseThrow();
        if (!tasks.contains(task)) {
            throw new Refusal(
                    404,
                    "allocation " + id + " has no task \"" + task + "\" (its tasks: "
                            + GatewayStatus.cut(String.join(", ", tasks)) + ")");
        }
        String name = user.getUsername();
        if (!admitUser(name)) {
            throw new Refusal(
                    429,
                    "user " + GatewayStatus.cut(name) + " has " + MAX_SESSIONS_PER_USER
                            + " exec sessions open through the gateway, the most one user may; end one first");
        }
        if (!sessions.tryAcquire()) {
            releaseUser(name);
            throw new Refusal(503, "the gateway relays as many exec sessions as it may; try again");
        }
        Runnable release = releasingOnce(name);
        ClientSocket agent = null;
        try {
            Relay relay = new Relay();
            try {
                agent = backend.exec(
                        node,
                        AgentProtocol.agentPath(exec.namespace(), exec.name(), "exec") + exec.query(),
                        user.getUsername(),
                        protocols,
                        relay.fromAgent());
            } catch (AgentClient.AgentException e) {
                release.run();
                int code = switch (e.status()) {
                    case 400, 404, 409, 429 -> e.status();
                    case 0 -> 503;
                    default -> 500;
                };
                throw new Refusal(code, "the agent of node " + node + ": " + GatewayStatus.cut(e.getMessage(), 1024));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                release.run();
                throw new Refusal(503, "the gateway is shutting down");
            }
            LOG.info(
                    "{} runs a command in task {} of {} on node {}",
                    GatewayStatus.cut(user.getUsername()),
                    task,
                    id,
                    node);
            // Jetty opens (and later closes) the user's side only when its 101 goes out: when it cannot, the
            // relay's timeout is what frees the session
            relay.expectUser(userOpens, release);
            response.setAcceptedSubProtocol(agent.protocol());
            MessageReceiver fromUser = relay.fromUser();
            return new MessageSocket(new MessageReceiver() {
                @Override
                public void opened(ExecSession.Peer peer) {
                    fromUser.opened(peer);
                }

                @Override
                public void message(ByteBuffer message, Runnable done) {
                    fromUser.message(message, done);
                }

                @Override
                public void closed(String why) {
                    try {
                        fromUser.closed(why);
                    } finally {
                        release.run();
                    }
                }
            });
        } catch (RuntimeException e) {
            release.run();
            if (agent != null) {
                agent.abort();
            }
            throw e;
        }
    }

    /** Sessions free now (tests). */
    int sessionsFree() {
        return sessions.availablePermits();
    }

    /** Gives one session back, however many of its ends call it. */
    private Runnable releasingOnce(String user) {
        java.util.concurrent.atomic.AtomicBoolean held = new java.util.concurrent.atomic.AtomicBoolean(true);
        return () -> {
            if (held.compareAndSet(true, false)) {
                sessions.release();
                releaseUser(user);
            }
        };
    }

    /** Counts a session for {@code user}; false when the user has as many as one may. */
    private boolean admitUser(String user) {
        boolean[] admitted = {false};
        perUser.compute(user, (u, n) -> {
            int open = n == null ? 0 : n;
            if (open >= MAX_SESSIONS_PER_USER) {
                return n;
            }
            admitted[0] = true;
            return open + 1;
        });
        return admitted[0];
    }

    private void releaseUser(String user) {
        perUser.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
    }

    @Override
    protected byte[] body(int status, String message) {
        return GatewayStatus.body(status, message);
    }
}
