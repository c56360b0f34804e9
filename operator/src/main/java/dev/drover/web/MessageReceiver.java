package dev.drover.web;

import dev.drover.execstream.ExecSession;
import java.nio.ByteBuffer;

/** Who reads a message-level WebSocket ({@link MessageSocket} on a server, {@link ClientSocket} on a client). */
public interface MessageReceiver {

    /** The socket is open; {@code peer} sends on it. */
    void opened(ExecSession.Peer peer);

    /** One whole binary message; {@code done} runs when it is dealt with, and the next is read only then. */
    void message(ByteBuffer message, Runnable done);

    /** The peer closed or the connection broke: nothing more comes. {@code why} says how, for a message. */
    void closed(String why);
}
