package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.execstream.ExecSession;
import dev.drover.httpapi.AgentCertificate;
import dev.drover.httpapi.TestCa;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JettyHttps} against hostile connections ({@link ConnectionBounds}): heads by a deadline, untrusted
 * connections making way for new ones, trusted and upgraded ones left alone, probes on a port of their own.
 */
class JettyHttpsBoundsTest {

    /** Eight connections, four of them untrusted; a head within a second of the accept or of the previous request. */
    static final ConnectionBounds SMALL = new ConnectionBounds(8, 4, Duration.ofSeconds(1), Duration.ofSeconds(1));

    @TempDir
    Path dir;

    AgentCertificate.Identity identity;
    SSLContext client;
    JettyHttps server;

    @BeforeEach
    void identity() throws Exception {
        identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        client = SSLContext.getInstance("TLS");
        client.init(null, new TrustManager[] {new TrustingAllCertificates()}, null);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** Answers {@code ok}; a request with {@code X-Trust} marks its connection trusted; upgrades {@code /exec}. */
    void start(ConnectionBounds bounds, JettyHttps.Probes probes) throws Exception {
        start(bounds, probes, KnownCertificates.NONE);
    }

    /** As {@link #start(ConnectionBounds, JettyHttps.Probes)}, asking a client certificate and knowing {@code known}. */
    void start(ConnectionBounds bounds, JettyHttps.Probes probes, KnownCertificates known) throws Exception {
        server = JettyHttps.start(
                "test",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                bounds,
                probes,
                identity.sslContext(),
                known != KnownCertificates.NONE,
                known,
                ex -> {
                    if (ex.header("X-Trust") != null) {
                        JettyHttps.trust(ex);
                    }
                    ex.send(200, "text/plain", "ok".getBytes(StandardCharsets.US_ASCII));
                },
                List.of(new JettyHttps.Upgrade(".*/exec$", (request, response, callback) -> {
                    response.setAcceptedSubProtocol(request.getSubProtocols().getFirst());
                    return new MessageSocket(new MessageReceiver() {
                        @Override
                        public void opened(ExecSession.Peer peer) {}

                        @Override
                        public void message(ByteBuffer message, Runnable done) {
                            done.run();
                        }

                        @Override
                        public void closed(String why) {}
                    });
                })));
    }

    SSLSocket connect(int port) throws IOException {
        return connect(port, Duration.ofSeconds(5));
    }

    /** A TLS connection to {@code port}, its handshake done within {@code timeout}. */
    SSLSocket connect(int port, Duration timeout) throws IOException {
        return connect(client, port, timeout);
    }

    /** A TLS connection to {@code port} presenting {@code certificate}, its handshake done. */
    SSLSocket connect(int port, TestCa.Leaf certificate) throws Exception {
        SSLContext presenting = SSLContext.getInstance("TLS");
        presenting.init(
                new javax.net.ssl.KeyManager[] {certificate.keyManager()},
                new TrustManager[] {new TrustingAllCertificates()},
                null);
        return connect(presenting, port, Duration.ofSeconds(5));
    }

    static SSLSocket connect(SSLContext client, int port, Duration timeout) throws IOException {
        SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), port);
        try {
            socket.setSoTimeout((int) timeout.toMillis());
            socket.startHandshake();
            socket.setSoTimeout(5000);
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** Sends {@code head} and reads the answer's status line and headers, then its body if it has a length. */
    static String exchange(SSLSocket socket, String head) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        StringBuilder answer = new StringBuilder();
        while (!answer.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the server closed the connection after: " + answer);
            }
            answer.append((char) b);
        }
        java.util.regex.Matcher length =
                java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(answer);
        if (length.find()) {
            answer.append(new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.US_ASCII));
        }
        return answer.toString();
    }

    static final String GET = "GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n";
    static final String TRUSTED_GET = "GET /x HTTP/1.1\r\nHost: localhost\r\nX-Trust: yes\r\n\r\n";

    /** Whether the server closed {@code socket}, waiting up to {@code wait} for it to. */
    static boolean closedWithin(Socket socket, Duration wait) throws IOException {
        socket.setSoTimeout((int) wait.toMillis());
        try {
            return socket.getInputStream().read() < 0;
        } catch (SocketTimeoutException open) {
            return false;
        } catch (javax.net.ssl.SSLException | java.net.SocketException closed) {
            return true;
        }
    }

    @Test
    void theClientsOrderOfCipherSuitesDecides() throws Exception {
        start(SMALL, null);
        for (List<String> offered : List.of(
                List.of("TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"),
                List.of("TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"))) {
            SSLSocket socket =
                    (SSLSocket) client.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), server.port());
            try (socket) {
                socket.setEnabledProtocols(new String[] {"TLSv1.3"});
                socket.setEnabledCipherSuites(offered.toArray(String[]::new));
                socket.startHandshake();

                assertThat(socket.getSession().getCipherSuite()).isEqualTo(offered.getFirst());
            }
        }
    }

    @Test
    void aHeadThatTricklesIsClosedAtItsDeadline() throws Exception {
        start(SMALL, null);
        try (SSLSocket socket = connect(server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write("GET /x HTTP/1.1\r\nHost: localhost\r\n".getBytes(StandardCharsets.US_ASCII));
            long start = System.nanoTime();
            boolean closed = false;
            // a header line each 100 ms, for up to 5 s: never idle (the idle timeout is 30 s), never done
            while (!closed && System.nanoTime() - start < Duration.ofSeconds(5).toNanos()) {
                try {
                    out.write("X-More: 1\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    closed = closedWithin(socket, Duration.ofMillis(100));
                } catch (IOException writeFailed) {
                    closed = true;
                }
            }
            assertThat(closed).as("closed while it trickled").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    void aHandshakeNeverFinishedIsClosedAtTheHeadDeadline() throws Exception {
        start(SMALL, null);
        try (Slowloris attack = Slowloris.open(server.port(), 1, Duration.ofSeconds(2))) {
            assertThat(attack.opened()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(3)).until(() -> attack.countClosedByServer() == 1);
        }
    }

    @Test
    void aKeptAliveConnectionMustSendItsNextHeadInTime() throws Exception {
        start(SMALL, null);
        try (SSLSocket socket = connect(server.port())) {
            assertThat(exchange(socket, TRUSTED_GET)).startsWith("HTTP/1.1 200").endsWith("ok");
            assertThat(exchange(socket, GET)).as("kept alive").startsWith("HTTP/1.1 200");
            assertThat(closedWithin(socket, Duration.ofSeconds(3))).isTrue();
        }
    }

    @Test
    void theOldestUntrustedConnectionMakesWayForANewOne() throws Exception {
        start(new ConnectionBounds(8, 4, Duration.ofSeconds(10), Duration.ofSeconds(10)), null);
        Slowloris oldest = Slowloris.open(server.port(), 1, Duration.ofSeconds(2));
        // accepted connections are opened on several selectors: the others must not be opened before it
        await().atMost(Duration.ofSeconds(3)).until(() -> server.connections() == 1);
        try (oldest;
                Slowloris others = Slowloris.open(server.port(), 3, Duration.ofSeconds(2))) {
            await().atMost(Duration.ofSeconds(3)).until(() -> server.connections() == 4);
            try (SSLSocket newest = connect(server.port())) {
                // the pool was full: the newest took the oldest's place
                assertThat(exchange(newest, GET)).startsWith("HTTP/1.1 200");
            }
            await().atMost(Duration.ofSeconds(3)).until(() -> oldest.countClosedByServer() == 1);
            assertThat(others.countClosedByServer()).isZero();
        }
    }

    @Test
    void aTrustedConnectionIsNotEvictedByAFlood() throws Exception {
        start(new ConnectionBounds(16, 4, Duration.ofSeconds(10), Duration.ofSeconds(10)), null);
        try (SSLSocket trusted = connect(server.port())) {
            assertThat(exchange(trusted, TRUSTED_GET)).startsWith("HTTP/1.1 200");
            try (Slowloris attack = Slowloris.open(server.port(), 10, Duration.ofSeconds(2))) {
                await().atMost(Duration.ofSeconds(3)).until(() -> attack.countClosedByServer() == 6);
                assertThat(exchange(trusted, GET)).as("still served").startsWith("HTTP/1.1 200");
            }
        }
    }

    @Test
    void aConnectionPresentingAKnownCertificateIsTrustedFromItsHandshake() throws Exception {
        TestCa ca = new TestCa("clients");
        TestCa.Leaf known = ca.sign("known", KeyPurposeId.id_kp_clientAuth);
        TestCa.Leaf stranger = ca.sign("stranger", KeyPurposeId.id_kp_clientAuth);
        start(
                new ConnectionBounds(16, 4, Duration.ofSeconds(10), Duration.ofSeconds(10)),
                null,
                chain -> chain[0].equals(known.certificate()));
        try (SSLSocket client = connect(server.port(), known);
                SSLSocket other = connect(server.port(), stranger)) {
            await().atMost(Duration.ofSeconds(3)).until(() -> server.connections() == 2);
            await().atMost(Duration.ofSeconds(3))
                    .alias("only the stranger waits among the untrusted")
                    .until(() -> server.untrustedConnections() == 1);
            // before a request: a flood past the untrusted pool closes the stranger, not the known client
            try (Slowloris attack = Slowloris.open(server.port(), 10, Duration.ofSeconds(2))) {
                await().atMost(Duration.ofSeconds(3)).until(() -> attack.countClosedByServer() == 6);
                assertThat(closedWithin(other, Duration.ofSeconds(1))).isTrue();
                assertThat(exchange(client, GET)).as("still served").startsWith("HTTP/1.1 200");
            }
        }
    }

    @Test
    void anUpgradedConnectionOutlivesTheHeadDeadlines() throws Exception {
        start(SMALL, null);
        try (SSLSocket socket = connect(server.port())) {
            assertThat(exchange(
                            socket,
                            "GET /x/exec HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                                    + "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"))
                    .startsWith("HTTP/1.1 101");
            // past both deadlines, and filling the untrusted pool twice over, the session goes on
            try (Slowloris attack = Slowloris.open(server.port(), 7, Duration.ofSeconds(2))) {
                assertThat(closedWithin(socket, Duration.ofMillis(2500))).isFalse();
                assertThat(attack.countClosedByServer()).isEqualTo(7);
            }
        }
    }

    @Test
    void probesAreAnsweredOnTheirOwnPortWhileTheMainOneIsFull() throws Exception {
        start(
                new ConnectionBounds(4, 2, Duration.ofSeconds(10), Duration.ofSeconds(10)),
                new JettyHttps.Probes(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Set.of("/healthz")));
        try (SSLSocket first = connect(server.port());
                SSLSocket second = connect(server.port())) {
            assertThat(exchange(first, TRUSTED_GET)).startsWith("HTTP/1.1 200");
            assertThat(exchange(second, TRUSTED_GET)).startsWith("HTTP/1.1 200");
            try (Slowloris attack = Slowloris.open(server.port(), 2, Duration.ofSeconds(2))) {
                assertThatThrownBy(() ->
                                connect(server.port(), Duration.ofSeconds(1)).close())
                        .as("the main port takes no more: a new connection waits in the backlog")
                        .isInstanceOf(SocketTimeoutException.class);
                try (SSLSocket probe = connect(server.probePort())) {
                    assertThat(exchange(probe, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                            .startsWith("HTTP/1.1 200")
                            .endsWith("ok");
                    assertThat(exchange(probe, GET)).as("only the probes").startsWith("HTTP/1.1 404");
                }
            }
        }
    }
}
