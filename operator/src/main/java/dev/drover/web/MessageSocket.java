package dev.drover.web;

import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.FutureCallback;
import org.eclipse.jetty.websocket.core.CloseStatus;
import org.eclipse.jetty.websocket.core.CoreSession;
import org.eclipse.jetty.websocket.core.Frame;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.OpCode;

/**
 * A server-side WebSocket at the level of whole binary messages, for the channel protocol: a message (its fragments
 * joined, {@link Channels#MAX_MESSAGE} bytes at most, else the socket closes with 1009) goes to the {@link Receiver},
 * and the next is read only when the receiver says it is done with it (delivery runs on Jetty's thread: a receiver
 * that blocks hands the message to a thread of its own), so a slow reader holds the writer back. What
 * is sent goes out one message at a time ({@link ExecSession.Peer#send} returns once it is written).
 */
public final class MessageSocket implements FrameHandler, ExecSession.Peer {

    /** How long one message may take to go out before the peer counts as gone. */
    static final Duration SEND_TIMEOUT = Duration.ofMinutes(5);

    private final MessageReceiver receiver;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private volatile CoreSession session;

    public MessageSocket(MessageReceiver receiver) {
        this.receiver = receiver;
    }

    /** The subprotocol agreed, or null. */
    public String protocol() {
        CoreSession s = session;
        return s == null ? null : s.getNegotiatedSubProtocol();
    }

    @Override
    public void onOpen(CoreSession coreSession, Callback callback) {
        this.session = coreSession;
        callback.succeeded();
        receiver.opened(this);
        coreSession.demand();
    }

    @Override
    public void onFrame(Frame frame, Callback callback) {
        byte op = frame.getOpCode();
        if (op != OpCode.BINARY && op != OpCode.CONTINUATION) {
            // a close ends the session through onClosed; text is not of the protocol; a ping is answered here (Jetty's
            // core leaves pongs to its handlers), as clients such as kubectl send pings to see the session lives
            if (op == OpCode.PING) {
                ByteBuffer payload = frame.getPayload();
                ByteBuffer copy = ByteBuffer.allocate(payload == null ? 0 : payload.remaining());
                if (payload != null) {
                    copy.put(payload.slice()).flip();
                }
                callback.succeeded();
                // the next frame is read only once the pong is written: a peer that floods pings and reads nothing
                // is held back by its own unread pongs instead of queueing them here without bound
                CoreSession s = session;
                s.sendFrame(new Frame(OpCode.PONG, copy), Callback.from(s::demand, failed -> s.abort()), false);
                return;
            }
            callback.succeeded();
            if (op == OpCode.TEXT) {
                session.close(CloseStatus.BAD_DATA, "the channel protocol sends binary messages", Callback.NOOP);
            } else if (op != OpCode.CLOSE) {
                session.demand();
            }
            return;
        }
        ByteBuffer payload = frame.getPayload();
        int length = payload == null ? 0 : payload.remaining();
        if (partial.size() + length > Channels.MAX_MESSAGE) {
            callback.succeeded();
            session.close(
                    CloseStatus.MESSAGE_TOO_LARGE,
                    "a message is at most " + Channels.MAX_MESSAGE + " bytes",
                    Callback.NOOP);
            return;
        }
        if (length > 0) {
            byte[] bytes = new byte[length];
            payload.slice().get(bytes);
            partial.writeBytes(bytes);
        }
        callback.succeeded();
        if (!frame.isFin()) {
            session.demand();
            return;
        }
        ByteBuffer message = ByteBuffer.wrap(partial.toByteArray());
        partial.reset();
        receiver.message(message, session::demand);
    }

    @Override
    public void onError(Throwable cause, Callback callback) {
        callback.succeeded();
    }

    @Override
    public void onClosed(CloseStatus closeStatus, Callback callback) {
        callback.succeeded();
        receiver.closed(closeStatus == null ? "closed" : closeStatus.getCode() + " " + closeStatus.getReason());
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        CoreSession s = session;
        if (s == null) {
            throw new IOException("the WebSocket is not open");
        }
        FutureCallback sent = new FutureCallback();
        s.sendFrame(new Frame(OpCode.BINARY, message), sent, false);
        try {
            sent.get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while sending", e);
        } catch (ExecutionException e) {
            throw new IOException("the peer is gone: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            s.abort();
            throw new IOException("the peer read nothing for " + SEND_TIMEOUT.toMinutes() + " minutes");
        }
    }

    @Override
    public void close(String error) {
        CoreSession s = session;
        if (s != null) {
            if (error == null) {
                s.close(CloseStatus.NORMAL, null, Callback.NOOP);
            } else {
                s.close(CloseStatus.POLICY_VIOLATION, cut(error), Callback.NOOP);
            }
        }
    }

    /** A close reason is at most 123 bytes. */
    private static String cut(String reason) {
        byte[] bytes = reason.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return bytes.length <= 120 ? reason : new String(bytes, 0, 120, java.nio.charset.StandardCharsets.UTF_8);
    }
}
