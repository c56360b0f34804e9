package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.execstream.ExecSession;
import dev.drover.httpapi.AgentCertificate;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@link MessageSocket} served by {@link JettyHttps}, attacked by a raw WebSocket client. */
class MessageSocketTest {

    @TempDir
    Path dir;

    JettyHttps server;
    final CountDownLatch closed = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        server = JettyHttps.start(
                "test",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                identity.sslContext(),
                false,
                ex -> ex.send(404, "text/plain", new byte[0]),
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
                        public void closed(String why) {
                            closed.countDown();
                        }
                    });
                })));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** The TCP connection under the TLS one: closing it drops the connection even while a write is stuck. */
    java.net.Socket raw;

    /** A TLS connection past the upgrade, whose answer is read up to its blank line. */
    SSLSocket upgraded() throws Exception {
        SSLContext trustAll = SSLContext.getInstance("TLS");
        trustAll.init(
                null,
                new TrustManager[] {
                    new X509TrustManager() {
                        @Override
                        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

                        @Override
                        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

                        @Override
                        public X509Certificate[] getAcceptedIssuers() {
                            return new X509Certificate[0];
                        }
                    }
                },
                null);
        raw = new java.net.Socket();
        // the client reads as little as it can hold: what the server answers piles up on the server's side
        raw.setReceiveBufferSize(4096);
        raw.setSendBufferSize(4096);
        raw.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()), 5000);
        SSLSocket socket = (SSLSocket) trustAll.getSocketFactory().createSocket(raw, "localhost", server.port(), true);
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET /x/exec HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                        + "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            assertThat(b).as("the upgrade's answer").isNotNegative();
            head.append((char) b);
        }
        assertThat(head.toString()).startsWith("HTTP/1.1 101");
        return socket;
    }

    SSLSocket tls;

    /** {@link #upgraded()}, returning the TCP connection under it ({@link #tls} is the TLS one). */
    java.net.Socket upgradedTcp() throws Exception {
        tls = upgraded();
        return raw;
    }

    /** A masked ping with 125 bytes of payload, the most a control frame holds. */
    static byte[] ping() {
        byte[] frame = new byte[2 + 4 + 125];
        frame[0] = (byte) 0x89;
        frame[1] = (byte) (0x80 | 125);
        return frame; // mask 0 and payload 0: masked, it is all zeros still
    }

    @Test
    void aClientThatFloodsPingsAndReadsNothingIsHeldBackNotBuffered() throws Exception {
        long limit = 96L * 1024 * 1024;
        AtomicLong written = new AtomicLong();
        try (java.net.Socket tcp = upgradedTcp()) {
            SSLSocket socket = tls;
            OutputStream out = socket.getOutputStream();
            byte[] burst = new byte[ping().length * 64];
            for (int i = 0; i < 64; i++) {
                System.arraycopy(ping(), 0, burst, i * ping().length, ping().length);
            }
            Thread flooder = Thread.ofVirtual().start(() -> {
                try {
                    while (written.get() < limit) {
                        out.write(burst);
                        written.addAndGet(burst.length);
                    }
                } catch (Exception e) {
                    // the socket closed under it: the test is over
                }
            });
            // the flood stops when the server stops reading it (its pongs unread): no progress for a second
            long last = -1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (written.get() != last && written.get() < limit && System.nanoTime() < deadline) {
                last = written.get();
                Thread.sleep(1000);
            }
            assertThat(written.get())
                    .as("bytes of pings the server took in while the client read none of its pongs")
                    .isLessThan(limit);
            // a TLS close would wait to write its close_notify behind the flood
            tcp.close();
            flooder.join(10_000);
            assertThat(closed.await(10, TimeUnit.SECONDS))
                    .as("the session ends when the client goes")
                    .isTrue();
        }
    }
}
