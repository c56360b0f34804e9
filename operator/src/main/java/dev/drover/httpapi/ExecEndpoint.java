package dev.drover.httpapi;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.ExecUpgrade;
import dev.drover.agentapi.Refusal;
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
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/allocations/NAMESPACE/NAME/exec?task=TASK&command=...} as a WebSocket upgrade with the channel
 * protocol ({@link Channels}): the request passes the {@link AgentGate} ({@code create} on {@code allocations/exec}),
 * the command starts (with an {@code Exec} event naming the user), and only then is the connection upgraded, so every
 * refusal is a plain HTTP answer. Sessions are bounded like followed logs ({@link Followers#EXECS}).
 */
final class ExecEndpoint extends ExecUpgrade {

    private static final Logger LOG = LoggerFactory.getLogger(ExecEndpoint.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long the upgrade may take after the command started. */
    static final java.time.Duration OPEN_TIMEOUT = java.time.Duration.ofSeconds(30);

    private final AgentGate gate;
    private final Followers sessions;
    private final Set<ExecSession> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ExecEndpoint(AgentGate gate, ApiLimits limits) {
        super(LOG, "the agent failed to open the exec session; its log says why");
        this.gate = gate;
        this.sessions = new Followers(limits, Followers.EXECS);
    }

    /** How many exec sessions run now. */
    int sessions() {
        return sessions.count();
    }

    @Override
    protected FrameHandler open(ServerUpgradeRequest request, ServerUpgradeResponse response) throws Refusal {
        String protocol = ExecUpgrade.protocols(request).getFirst();
        if (closed) {
            throw new Refusal(503, "the agent is shutting down");
        }
        InetSocketAddress remote =
                request.getConnectionMetaData().getRemoteSocketAddress() instanceof InetSocketAddress a ? a : null;
        AgentGate.Entry entry = gate.admit(new AgentGate.Asked(
                "GET",
                request.getHttpURI().getPath(),
                request.getHttpURI().getQuery(),
                request.getHeaders().get("Authorization"),
                request.getHeaders().get(AgentProtocol.ON_BEHALF_OF),
                remote == null ? null : remote.getAddress(),
                JettyHttps.peerCertificates(request)));
        if (entry instanceof AgentGate.Refused r) {
            throw new Refusal(r.status(), r.message(), r.retryAfter());
        }
        AgentGate.Admitted admitted = (AgentGate.Admitted) entry;
        AllocId id = admitted.request().id();
        ApiRequest.Exec exec = admitted.request().exec();
        LocalAllocation local = admitted.local();
        if (!local.tasks().contains(exec.task())) {
            throw new Refusal(
                    404,
                    "allocation " + id + " has no task " + UserText.quote(exec.task()) + " (its tasks: "
                            + UserText.join(local.tasks(), ", ") + ")");
        }
        Followers.Admission admission = sessions.admit(admitted.user(), id.namespace());
        if (admission.slot().isEmpty()) {
            throw new Refusal(429, admission.refusal(), Followers.RETRY);
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
            throw new Refusal(
                    409,
                    "task " + exec.task() + " of allocation " + id + " is not running (" + local.state(exec.task())
                            + "): nothing was run");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            slot.close();
            throw new Refusal(503, "the agent is shutting down; nothing was run");
        } catch (DriverException | RuntimeException e) {
            slot.close();
            throw new Refusal(
                    500,
                    "running " + exec.request().describe() + " in task " + exec.task() + " of allocation " + id
                            + " failed: " + UserText.bare(String.valueOf(e.getMessage())));
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

    /** A refusal as the agent's other errors are: JSON {@code {"status": ..., "message": ...}}. */
    @Override
    protected byte[] body(int status, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("message", message);
        try {
            return JSON.writeValueAsBytes(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8);
        }
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
