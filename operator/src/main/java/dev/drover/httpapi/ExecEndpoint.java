package dev.drover.httpapi;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import dev.drover.state.AllocId;
import dev.drover.web.JettyHttps;
import dev.drover.web.MessageSocket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/allocations/NAMESPACE/NAME/exec?task=TASK&command=...} as a WebSocket upgrade with the channel
 * protocol ({@link Channels}): the request passes the {@link AgentGate} ({@code create} on {@code allocations/exec}),
 * the command starts (with an {@code Exec} event naming the user), and only then is the connection upgraded, so every
 * refusal is a plain HTTP answer. Sessions are bounded like followed logs ({@link Followers#EXECS}).
 */
final class ExecEndpoint implements WebSocketNegotiator {

    private static final Logger LOG = LoggerFactory.getLogger(ExecEndpoint.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The path regex the server routes here. */
    static final String PATH = "^/v1/allocations/[^/]+/[^/]+/exec$";

    /** How long the upgrade may take after the command started. */
    static final java.time.Duration OPEN_TIMEOUT = java.time.Duration.ofSeconds(30);

    private final AgentGate gate;
    private final Followers sessions;
    private final Set<ExecSession> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ExecEndpoint(AgentGate gate, ApiLimits limits) {
        this.gate = gate;
        this.sessions = new Followers(limits, Followers.EXECS);
    }

    /** How many exec sessions run now. */
    int sessions() {
        return sessions.count();
    }

    @Override
    public FrameHandler negotiate(ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
        try {
            return negotiateOrThrow(request, response, callback);
        } catch (RuntimeException e) {
            // Jetty's own error page would show the exception's text to the client
            LOG.warn("an exec upgrade of {} failed", request.getHttpURI().getPath(), e);
            refuse(
                    response,
                    callback,
                    new AgentGate.Refused(500, "the agent failed to open the exec session; its log says why"));
            return null;
        }
    }

    private FrameHandler negotiateOrThrow(
            ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
        String protocol = Channels.PROTOCOLS.stream()
                .filter(request.getSubProtocols()::contains)
                .findFirst()
                .orElse(null);
        if (protocol == null) {
            refuse(
                    response,
                    callback,
                    new AgentGate.Refused(
                            400, "exec speaks the WebSocket subprotocol " + Channels.V5 + " (or " + Channels.V4 + ")"));
            return null;
        }
        if (closed) {
            refuse(response, callback, new AgentGate.Refused(503, "the agent is shutting down"));
            return null;
        }
        InetSocketAddress remote =
                request.getConnectionMetaData().getRemoteSocketAddress() instanceof InetSocketAddress a ? a : null;
        AgentGate.Entry entry = gate.admit(new AgentGate.Asked(
                "GET",
                request.getHttpURI().getPath(),
                request.getHttpURI().getQuery(),
                request.getHeaders().get("Authorization"),
                request.getHeaders().get(AgentGate.ON_BEHALF_OF),
                remote == null ? null : remote.getAddress(),
                JettyHttps.peerCertificates(request)));
        if (entry instanceof AgentGate.Refused r) {
            refuse(response, callback, r);
            return null;
        }
        AgentGate.Admitted admitted = (AgentGate.Admitted) entry;
        AllocId id = admitted.request().id();
        ApiRequest.Exec exec = admitted.request().exec();
        LocalAllocation local = admitted.local();
        if (!local.tasks().contains(exec.task())) {
            refuse(
                    response,
                    callback,
                    new AgentGate.Refused(
                            404,
                            "allocation " + id + " has no task " + UserText.quote(exec.task()) + " (its tasks: "
                                    + UserText.join(local.tasks(), ", ") + ")"));
            return null;
        }
        Followers.Admission admission = sessions.admit(admitted.user(), id.namespace());
        if (admission.slot().isEmpty()) {
            refuse(response, callback, new AgentGate.Refused(429, admission.refusal(), Followers.RETRY));
            return null;
        }
        Followers.Slot slot = admission.slot().get();
        ExecProcess process;
        try {
            process = local.exec(
                    exec.task(),
                    exec.request(),
                    "Exec " + exec.request().describe() + " by " + UserText.quote(admitted.user()));
        } catch (TaskNotRunningException e) {
            slot.close();
            refuse(
                    response,
                    callback,
                    new AgentGate.Refused(
                            409,
                            "task " + exec.task() + " of allocation " + id + " is not running ("
                                    + local.state(exec.task()) + "): nothing was run"));
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            slot.close();
            refuse(response, callback, new AgentGate.Refused(503, "the agent is shutting down; nothing was run"));
            return null;
        } catch (DriverException | RuntimeException e) {
            slot.close();
            refuse(
                    response,
                    callback,
                    new AgentGate.Refused(
                            500,
                            "running " + exec.request().describe() + " in task " + exec.task() + " of allocation " + id
                                    + " failed: " + UserText.bare(String.valueOf(e.getMessage()))));
            return null;
        }
        LOG.info(
                "{} runs {} in task {} of {}",
                UserText.bare(admitted.user()),
                exec.request().describe(),
                exec.task(),
                id);
        response.setAcceptedSubProtocol(protocol);
        ExecSession.Streams streams = new ExecSession.Streams(
                exec.request().stdin(), exec.stdout(), exec.stderr(), protocol.equals(Channels.V5));
        Running running = new Running(process, streams, slot);
        Thread.ofVirtual().name("exec-open").start(running::abandonUnlessOpened);
        return new MessageSocket(running);
    }

    /** One command joined to its socket: the session starts when the socket opens and ends when it closes. */
    private final class Running implements dev.drover.web.MessageReceiver {
        private final ExecProcess process;
        private final ExecSession.Streams streams;
        private final Followers.Slot slot;
        private ExecSession session;
        private boolean abandoned;

        Running(ExecProcess process, ExecSession.Streams streams, Followers.Slot slot) {
            this.process = process;
            this.streams = streams;
            this.slot = slot;
        }

        @Override
        public synchronized void opened(ExecSession.Peer socket) {
            if (abandoned) {
                socket.close("the session was given up before it opened");
                return;
            }
            session = new ExecSession(process, streams, socket);
            open.add(session);
            session.start();
            notifyAll();
        }

        /**
         * Kills the command when its socket has not opened within {@link #OPEN_TIMEOUT}: the client hung up between
         * the start of the command and the end of the upgrade, and no socket will ever close to say so.
         */
        void abandonUnlessOpened() {
            synchronized (this) {
                long deadline = System.nanoTime() + OPEN_TIMEOUT.toNanos();
                try {
                    while (session == null && System.nanoTime() - deadline < 0) {
                        wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (session != null || abandoned) {
                    return;
                }
                abandoned = true;
            }
            LOG.info("an exec's upgrade did not complete within {}: its command is killed", OPEN_TIMEOUT);
            process.close();
            slot.close();
        }

        @Override
        public void message(ByteBuffer message, Runnable done) {
            session.receive(message, done);
        }

        @Override
        public void closed(String why) {
            ExecSession s;
            synchronized (this) {
                s = session;
            }
            if (s == null) {
                synchronized (this) {
                    if (abandoned) {
                        return;
                    }
                    abandoned = true;
                }
                process.close();
            } else {
                open.remove(s);
                Thread.ofVirtual().name("exec-end").start(s::close);
            }
            slot.close();
        }
    }

    /** Answers {@code refused} as the agent's other errors are: JSON {@code {"status": ..., "message": ...}}. */
    private static void refuse(ServerUpgradeResponse response, Callback callback, AgentGate.Refused refused) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", refused.status());
        body.put("message", refused.message());
        response.setStatus(refused.status());
        response.getHeaders().put("Content-Type", "application/json");
        if (!refused.retryAfter().isZero()) {
            response.getHeaders()
                    .put(
                            "Retry-After",
                            Long.toString(Math.max(1, refused.retryAfter().toSeconds())));
        }
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            bytes = ("{\"status\":" + refused.status() + "}").getBytes(StandardCharsets.UTF_8);
        }
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }

    /** Ends every session (their commands are killed) and refuses new ones. */
    void close() {
        closed = true;
        for (ExecSession s : open) {
            s.close();
        }
        open.clear();
    }
}
