package dev.drover.agentapi;

import dev.drover.execstream.Channels;
import java.nio.ByteBuffer;
import java.util.List;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;
import org.slf4j.Logger;

/**
 * An exec's WebSocket upgrade as the agent and the gateway both take it: the channel subprotocols the client offers,
 * and every refusal a plain HTTP answer in the server's own error format, a failure of the server's a 500 whose
 * cause goes to its log only. {@link #open} accepts the upgrade or throws the {@link Refusal} to answer.
 */
public abstract class ExecUpgrade implements WebSocketNegotiator {

    private final Logger log;
    private final String failed;

    /** {@code failed}: what the caller is told when opening the session fails for a reason that is not theirs. */
    protected ExecUpgrade(Logger log, String failed) {
        this.log = log;
        this.failed = failed;
    }

    /** Opens the session, having set the accepted subprotocol on {@code response}; or refuses. */
    protected abstract FrameHandler open(ServerUpgradeRequest request, ServerUpgradeResponse response) throws Refusal;

    /** The body of a refusal, in the server's error format (sent as {@code application/json}). */
    protected abstract byte[] body(int status, String message);

    @Override
    public final FrameHandler negotiate(
            ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
        try {
            return open(request, response);
        } catch (Refusal r) {
            refuse(response, callback, r);
        } catch (RuntimeException e) {
            // Jetty's own error page would show the exception's text to the client
            log.warn("an exec upgrade of {} failed", request.getHttpURI().getPath(), e);
            refuse(response, callback, new Refusal(500, failed));
        }
        return null;
    }

    /** The channel subprotocols the client offers, ours in order of preference; a 400 when it offers none of them. */
    public static List<String> protocols(ServerUpgradeRequest request) throws Refusal {
        List<String> offered = Channels.PROTOCOLS.stream()
                .filter(request.getSubProtocols()::contains)
                .toList();
        if (offered.isEmpty()) {
            throw new Refusal(
                    400, "exec speaks the WebSocket subprotocol " + Channels.V5 + " (or " + Channels.V4 + ")");
        }
        return offered;
    }

    private void refuse(ServerUpgradeResponse response, Callback callback, Refusal refusal) {
        response.setStatus(refusal.status());
        response.getHeaders().put("Content-Type", "application/json");
        if (!refusal.retryAfter().isZero()) {
            response.getHeaders()
                    .put(
                            "Retry-After",
                            Long.toString(Math.max(1, refusal.retryAfter().toSeconds())));
        }
        response.write(true, ByteBuffer.wrap(body(refusal.status(), refusal.getMessage())), callback);
    }
}
