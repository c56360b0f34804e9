package dev.drover.web;

import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The client side of a message-level WebSocket ({@link java.net.http.WebSocket}): whole binary messages of at most
 * {@link Channels#MAX_MESSAGE} bytes go to the {@link MessageReceiver}, the next read only when it is done with the
 * last; {@link #send} returns once a message is written.
 */
public final class ClientSocket implements ExecSession.Peer {

    /** A server that answered the upgrade with something else than 101: its status and body, as it sent them. */
    public static final class Refused extends IOException {
        private final int status;
        private final String body;

        Refused(int status, String body) {
            super("the server answered " + status + ": " + body);
            this.status = status;
            this.body = body;
        }

        public int status() {
            return status;
        }

        public String body() {
            return body;
        }
    }

    /** How long a close may wait for the server's before the connection is dropped. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final WebSocket socket;
    private final Listener listener;
    private final java.util.concurrent.locks.ReentrantLock sending = new java.util.concurrent.locks.ReentrantLock();

    private ClientSocket(WebSocket socket, Listener listener) {
        this.socket = socket;
        this.listener = listener;
    }

    /** Sends a ping; whether its pong came back within {@code within}. */
    public boolean ping(Duration within) throws InterruptedException {
        java.util.concurrent.CompletableFuture<Void> pong = new java.util.concurrent.CompletableFuture<>();
        listener.pong = pong;
        socket.sendPing(ByteBuffer.wrap(new byte[] {'d'}));
        try {
            pong.get(within.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    /**
     * Opens {@code uri} (wss) offering {@code protocols}, with {@code headers}; the receiver hears of it at once.
     *
     * @throws Refused when the server answers the upgrade with an HTTP error
     */
    public static ClientSocket open(
            HttpClient http,
            URI uri,
            Map<String, String> headers,
            List<String> protocols,
            MessageReceiver receiver,
            Duration timeout)
            throws IOException, InterruptedException {
        return open(http, false, uri, single(headers), protocols, receiver, timeout);
    }

    /** As {@link #open(HttpClient, URI, Map, List, MessageReceiver, Duration)}, a header sent once per value. */
    public static ClientSocket openRepeating(
            HttpClient http,
            URI uri,
            Map<String, List<String>> headers,
            List<String> protocols,
            MessageReceiver receiver,
            Duration timeout)
            throws IOException, InterruptedException {
        return open(http, false, uri, headers, protocols, receiver, timeout);
    }

    private static Map<String, List<String>> single(Map<String, String> headers) {
        Map<String, List<String>> out = new java.util.LinkedHashMap<>();
        headers.forEach((k, v) -> out.put(k, List.of(v)));
        return out;
    }

    /**
     * As {@link #open(HttpClient, URI, Map, List, MessageReceiver, Duration)}, with a client of its own, which is
     * shut down when the socket ends (or does not open).
     */
    public static ClientSocket openOwning(
            HttpClient http,
            URI uri,
            Map<String, String> headers,
            List<String> protocols,
            MessageReceiver receiver,
            Duration timeout)
            throws IOException, InterruptedException {
        boolean opened = false;
        try {
            ClientSocket socket = open(http, true, uri, single(headers), protocols, receiver, timeout);
            opened = true;
            return socket;
        } finally {
            if (!opened) {
                http.shutdownNow();
            }
        }
    }

    private static ClientSocket open(
            HttpClient http,
            boolean owned,
            URI uri,
            Map<String, List<String>> headers,
            List<String> protocols,
            MessageReceiver receiver,
            Duration timeout)
            throws IOException, InterruptedException {
        WebSocket.Builder builder = http.newWebSocketBuilder().connectTimeout(timeout);
        headers.forEach((name, values) -> values.forEach(v -> builder.header(name, v)));
        if (!protocols.isEmpty()) {
            builder.subprotocols(
                    protocols.getFirst(), protocols.subList(1, protocols.size()).toArray(String[]::new));
        }
        Listener listener = new Listener(receiver, owned ? http : null);
        try {
            builder.buildAsync(uri, listener).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return listener.socket;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof WebSocketHandshakeException h) {
                Object body = h.getResponse().body();
                String text = body instanceof byte[] b
                        ? new String(b, StandardCharsets.UTF_8)
                        : body == null ? "" : body.toString();
                throw new Refused(h.getResponse().statusCode(), text);
            }
            throw new IOException(
                    "cannot open " + uri.getHost() + ":" + uri.getPort() + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("no WebSocket with " + uri.getHost() + ":" + uri.getPort() + " within " + timeout);
        }
    }

    /** The subprotocol the server chose. */
    public String protocol() {
        return socket.getSubprotocol();
    }

    /**
     * {@inheritDoc} Safe from several threads at once (the exec command line's input and its terminal's size): the
     * JDK's WebSocket fails a send begun while another is pending, so they take turns.
     */
    @Override
    public void send(ByteBuffer message) throws IOException {
        sending.lock();
        try {
            sendAlone(message);
        } finally {
            sending.unlock();
        }
    }

    private void sendAlone(ByteBuffer message) throws IOException {
        try {
            socket.sendBinary(message, true).get(MessageSocket.SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            socket.abort();
            throw new IOException("interrupted while sending", e);
        } catch (ExecutionException e) {
            throw new IOException("the server is gone: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            socket.abort();
            throw new IOException("the server read nothing for " + MessageSocket.SEND_TIMEOUT.toMinutes() + " minutes");
        }
    }

    @Override
    public void close(String error) {
        if (error == null) {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "").exceptionally(t -> null);
        } else {
            socket.sendClose(1008, error.length() > 100 ? error.substring(0, 100) : error)
                    .exceptionally(t -> null);
        }
        // a server that never answers the close would hold the connection (and, relayed, the session) open
        Thread.ofVirtual().name("websocket-close").start(() -> {
            try {
                listener.ended.get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                socket.abort();
                listener.end("the server did not answer the close within " + CLOSE_WAIT.toSeconds() + " seconds");
            } catch (InterruptedException | ExecutionException e) {
                socket.abort();
            }
        });
    }

    /** Drops the connection at once. */
    public void abort() {
        socket.abort();
    }

    private static final class Listener implements WebSocket.Listener {
        private final MessageReceiver receiver;
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
        private final java.util.concurrent.CompletableFuture<Void> ended =
                new java.util.concurrent.CompletableFuture<>();
        private final HttpClient owned;
        private volatile ClientSocket socket;
        private volatile java.util.concurrent.CompletableFuture<Void> pong;

        Listener(MessageReceiver receiver, HttpClient owned) {
            this.receiver = receiver;
            this.owned = owned;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            socket = new ClientSocket(webSocket, this);
            receiver.opened(socket);
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            if (partial.size() + data.remaining() > Channels.MAX_MESSAGE) {
                webSocket.sendClose(1009, "a message is at most " + Channels.MAX_MESSAGE + " bytes");
                webSocket.abort();
                end("a message larger than " + Channels.MAX_MESSAGE + " bytes");
                return null;
            }
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            partial.writeBytes(bytes);
            if (!last) {
                webSocket.request(1);
                return null;
            }
            ByteBuffer message = ByteBuffer.wrap(partial.toByteArray());
            partial.reset();
            receiver.message(message, () -> webSocket.request(1));
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
            java.util.concurrent.CompletableFuture<Void> waiting = pong;
            if (waiting != null) {
                waiting.complete(null);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            end(statusCode + (reason == null || reason.isEmpty() ? "" : " " + reason));
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            end(String.valueOf(error));
        }

        private void end(String why) {
            if (ended.complete(null)) {
                try {
                    receiver.closed(why);
                } finally {
                    if (owned != null) {
                        owned.shutdownNow();
                    }
                }
            }
        }
    }
}
