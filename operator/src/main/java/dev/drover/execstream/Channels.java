package dev.drover.execstream;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The Kubernetes remote-command channel protocol that {@code kubectl exec} speaks over a WebSocket: every binary
 * message starts with the number of its channel, the rest is the channel's bytes. Version 5 ({@link #V5}) adds
 * {@link #CLOSE}, which ends one channel (stdin closed is the end of the command's input); version 4 ({@link #V4})
 * lacks it. The status of the command comes once, as a JSON {@code metav1.Status} on {@link #ERROR}
 * ({@link ExecStatus}).
 */
public final class Channels {

    public static final String V5 = "v5.channel.k8s.io";
    public static final String V4 = "v4.channel.k8s.io";
    /** The subprotocols served, the preferred first. */
    public static final List<String> PROTOCOLS = List.of(V5, V4);

    public static final int STDIN = 0;
    public static final int STDOUT = 1;
    public static final int STDERR = 2;
    public static final int ERROR = 3;
    public static final int RESIZE = 4;
    public static final int CLOSE = 255;

    /** The largest message a peer may send (channel byte included); a larger one ends the session. */
    public static final int MAX_MESSAGE = 64 * 1024;
    /** The most bytes of output one message carries. */
    public static final int CHUNK = 32 * 1024;

    private Channels() {}

    /** One message of a channel that must be read: which channel and what it carries. */
    public record Message(int channel, ByteBuffer payload) {}

    /** A message that breaks the protocol: the session ends with this reason. */
    public static final class ProtocolException extends Exception {
        public ProtocolException(String message) {
            super(message);
        }
    }

    /** A message on {@code channel} carrying {@code length} bytes of {@code data} from {@code offset}. */
    public static ByteBuffer message(int channel, byte[] data, int offset, int length) {
        ByteBuffer out = ByteBuffer.allocate(1 + length);
        out.put((byte) channel).put(data, offset, length).flip();
        return out;
    }

    /** Version 5's message that ends {@code channel}. */
    public static ByteBuffer close(int channel) {
        return ByteBuffer.wrap(new byte[] {(byte) CLOSE, (byte) channel});
    }

    /** Reads one message; the payload shares {@code message}'s bytes. */
    public static Message read(ByteBuffer message) throws ProtocolException {
        if (!message.hasRemaining()) {
            throw new ProtocolException("an empty message has no channel");
        }
        if (message.remaining() > MAX_MESSAGE) {
            throw new ProtocolException(
                    "a message of " + message.remaining() + " bytes is larger than " + MAX_MESSAGE + " bytes");
        }
        ByteBuffer copy = message.slice();
        int channel = Byte.toUnsignedInt(copy.get());
        if (channel > RESIZE && channel != CLOSE) {
            throw new ProtocolException("there is no channel " + channel);
        }
        return new Message(channel, copy.slice());
    }

    /** A terminal's size, as channel {@link #RESIZE} carries it: {@code {"Width":80,"Height":24}}. */
    public record Size(int columns, int rows) {

        /** The most columns or rows a terminal may say it has. */
        public static final int MAX = 10_000;

        public Size {
            if (columns < 0 || rows < 0 || columns > MAX || rows > MAX) {
                throw new IllegalArgumentException(
                        "a terminal of " + columns + "x" + rows + " is outside 0.." + MAX + " columns and rows");
            }
        }

        public String json() {
            return "{\"Width\":" + columns + ",\"Height\":" + rows + "}";
        }

        /** Reads the JSON of a resize message; a size outside {@link #MAX}, or what is no size, is refused. */
        public static Size parse(ByteBuffer payload) throws ProtocolException {
            try {
                var node = ExecStatus.JSON.readTree(ExecStatus.bytes(payload));
                if (node == null
                        || !node.path("Width").canConvertToInt()
                        || !node.path("Height").canConvertToInt()) {
                    throw new ProtocolException("a resize message is {\"Width\":COLUMNS,\"Height\":ROWS}");
                }
                return new Size(node.path("Width").asInt(), node.path("Height").asInt());
            } catch (java.io.IOException | IllegalArgumentException e) {
                throw new ProtocolException(
                        "a resize message is {\"Width\":COLUMNS,\"Height\":ROWS}: " + e.getMessage());
            }
        }
    }
}
