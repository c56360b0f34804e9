package dev.drover.cli;

import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import dev.drover.execstream.ExecStatus;
import dev.drover.httpapi.AgentClient;
import dev.drover.web.ClientSocket;
import dev.drover.web.MessageReceiver;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code kubectl drover exec [-i] [-t] ALLOC TASK -- COMMAND...}: opens the exec WebSocket of the aggregated API
 * through the API server with the kubeconfig's credentials (its CA, client certificate, token), sends standard input
 * (with {@code -i}; its end closes the command's input), writes the command's output and error where they belong,
 * and ends with the command's exit code. With {@code -t} the local terminal is raw for the session and its size is
 * sent at the start and whenever a once-a-second look finds it changed.
 */
final class ExecCommand {

    private static final Duration OPEN_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RESIZE_POLL = Duration.ofSeconds(1);

    /** What to run: where, what, and which streams. */
    record Request(String namespace, String alloc, String task, List<String> command, boolean stdin, boolean tty) {}

    private ExecCommand() {}

    /** Runs the command; returns its exit code (1 when it did not say one). */
    static int run(Config config, Request r, InputStream in, PrintStream out, PrintStream err) throws CommandFailure {
        StringBuilder query = new StringBuilder("?task=").append(encode(r.task()));
        for (String word : r.command()) {
            query.append("&command=").append(encode(word));
        }
        query.append("&stdin=").append(r.stdin()).append("&stdout=true&stderr=").append(!r.tty());
        query.append("&tty=").append(r.tty());
        URI target = URI.create(config.getMasterUrl().replaceAll("/+$", "").replaceFirst("^http", "ws")
                + ApiAnswers.API + "/namespaces/" + encode(r.namespace()) + "/allocations/" + encode(r.alloc())
                + "/exec" + query);
        HttpClient http;
        try {
            http = HttpClient.newBuilder()
                    .sslContext(SSLUtils.sslContext(config))
                    .connectTimeout(OPEN_TIMEOUT)
                    .build();
        } catch (Exception e) {
            throw new CommandFailure("cannot set up TLS from the kubeconfig: " + e.getMessage());
        }
        Session session = new Session(out, err);
        ClientSocket socket;
        try {
            socket = ClientSocket.openOwning(
                    http, target, credentials(config), Channels.PROTOCOLS, session, OPEN_TIMEOUT);
        } catch (ClientSocket.Refused e) {
            throw new CommandFailure(ApiAnswers.failure(e.status(), e.body()), e.status());
        } catch (IOException e) {
            throw ApiAnswers.unreachable(config.getMasterUrl(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted");
        }
        boolean v5 = Channels.V5.equals(socket.protocol());
        Optional<Terminal> terminal = r.tty() ? Terminal.raw() : Optional.empty();
        Thread resizes = terminal.map(
                        t -> Thread.ofVirtual().name("exec-resize").start(() -> resize(t, socket, session)))
                .orElse(null);
        if (r.stdin()) {
            // a daemon: a read of the local input cannot be interrupted, and must not keep the command line alive
            Thread.ofPlatform().daemon().name("exec-stdin").start(() -> input(in, socket, v5, session));
        }
        try {
            session.ended.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            socket.abort();
        } finally {
            if (resizes != null) {
                resizes.interrupt();
            }
            terminal.ifPresent(Terminal::restore);
        }
        ExecStatus.Outcome outcome = session.outcome.get();
        if (outcome == null) {
            err.println("kubectl drover: the session ended before the command's status came ("
                    + TerminalText.clean(String.valueOf(session.why)) + ")");
            return 1;
        }
        if (!outcome.message().isEmpty()) {
            err.println("kubectl drover: " + TerminalText.clean(outcome.message()));
        }
        return outcome.code();
    }

    /** The kubeconfig's credentials as headers (its client certificate is in the TLS context). */
    private static Map<String, String> credentials(Config config) {
        Map<String, String> headers = new LinkedHashMap<>();
        String token = AgentClient.bearerToken(config);
        if (token != null && !token.isEmpty()) {
            headers.put("Authorization", "Bearer " + token);
        } else if (config.getUsername() != null && config.getPassword() != null) {
            headers.put(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((config.getUsername() + ":" + config.getPassword())
                                            .getBytes(StandardCharsets.UTF_8)));
        }
        return headers;
    }

    private static void input(InputStream in, ClientSocket socket, boolean v5, Session session) {
        byte[] buffer = new byte[Channels.CHUNK];
        try {
            for (int n; (n = in.read(buffer)) >= 0 && session.ended.getCount() > 0; ) {
                if (n > 0) {
                    socket.send(Channels.message(Channels.STDIN, buffer, 0, n));
                }
            }
            if (v5 && session.ended.getCount() > 0) {
                socket.send(Channels.close(Channels.STDIN));
            }
        } catch (IOException e) {
            // the session ended: what is left of the input goes nowhere
        }
    }

    private static void resize(Terminal terminal, ClientSocket socket, Session session) {
        int[] last = null;
        try {
            while (session.ended.getCount() > 0) {
                int[] size = terminal.size();
                if (size != null && (last == null || size[0] != last[0] || size[1] != last[1])) {
                    byte[] json = new Channels.Size(
                                    Math.min(size[0], Channels.Size.MAX), Math.min(size[1], Channels.Size.MAX))
                            .json()
                            .getBytes(StandardCharsets.UTF_8);
                    socket.send(Channels.message(Channels.RESIZE, json, 0, json.length));
                    last = size;
                }
                Thread.sleep(RESIZE_POLL);
            }
        } catch (InterruptedException | IOException e) {
            // the session ended
        }
    }

    /** What comes from the command: output where it belongs, the status, and the end. */
    private static final class Session implements MessageReceiver {
        private final PrintStream out;
        private final PrintStream err;
        final CountDownLatch ended = new CountDownLatch(1);
        final AtomicReference<ExecStatus.Outcome> outcome = new AtomicReference<>();
        volatile String why;

        Session(PrintStream out, PrintStream err) {
            this.out = out;
            this.err = err;
        }

        @Override
        public void opened(ExecSession.Peer peer) {}

        @Override
        public void message(ByteBuffer message, Runnable done) {
            try {
                Channels.Message m = Channels.read(message);
                ByteBuffer payload = m.payload();
                switch (m.channel()) {
                    case Channels.STDOUT -> write(out, payload);
                    case Channels.STDERR -> write(err, payload);
                    case Channels.ERROR -> outcome.set(ExecStatus.read(payload));
                    default -> {
                        // a closed channel, or what a server does not send
                    }
                }
            } catch (Channels.ProtocolException e) {
                why = e.getMessage();
            } finally {
                done.run();
            }
        }

        private static void write(PrintStream to, ByteBuffer payload) {
            byte[] bytes = new byte[payload.remaining()];
            payload.get(bytes);
            to.write(bytes, 0, bytes.length);
            to.flush();
        }

        @Override
        public void closed(String why) {
            if (this.why == null) {
                this.why = why;
            }
            ended.countDown();
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
