package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.httpapi.AgentCertificate;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JettyHttps} over HTTP/2, as ALPN negotiates it with a client that offers it (fabric8's, kubectl's): requests
 * multiplexed over one connection, within the connection bounds, and HTTP/1.1 still served to clients that ask for it.
 */
class JettyHttpsHttp2Test {

    @TempDir
    Path dir;

    JettyHttps server;
    /** TLS that trusts the server's certificate, for every client here. */
    SSLContext trusting;

    HttpClient http2;
    HttpClient http1;
    /** Bytes of {@code /big} (8 MB) its handler has written. */
    final java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
    /** Released by a test: {@code /hold} answers then. */
    final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        server = JettyHttps.start(
                "test",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                JettyHttpsBoundsTest.SMALL,
                null,
                identity.sslContext(),
                false,
                KnownCertificates.NONE,
                ex -> {
                    if (ex.rawPath().equals("/hold")) {
                        try {
                            release.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                    if (ex.rawPath().equals("/big")) {
                        try (java.io.OutputStream out = ex.stream(200, "application/octet-stream")) {
                            byte[] chunk = new byte[16 * 1024];
                            for (int i = 0; i < 512; i++) {
                                out.write(chunk);
                                out.flush();
                                written.addAndGet(chunk.length);
                            }
                        }
                        return;
                    }
                    ex.send(200, "text/plain", ex.rawPath().getBytes(StandardCharsets.US_ASCII));
                },
                List.of());
        trusting = SSLContext.getInstance("TLS");
        trusting.init(null, new TrustManager[] {new TrustingAllCertificates()}, null);
        http2 = HttpClient.newBuilder().sslContext(trusting).build();
        http1 = HttpClient.newBuilder()
                .sslContext(trusting)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    @AfterEach
    void stop() {
        release.countDown();
        http2.close();
        http1.close();
        server.close();
    }

    HttpRequest get(String path) {
        return HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + path))
                .timeout(Duration.ofSeconds(20))
                .build();
    }

    @Test
    void aClientOfferingHttp2GetsIt() throws Exception {
        HttpResponse<String> answer = http2.send(get("/x"), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(answer.body()).isEqualTo("/x");
    }

    /**
     * A handler that answers without reading the request's body (a DELETE's options): the client, still sending it
     * (600 KB: more than the server's stream window), gets the answer, not a stream reset.
     */
    @Test
    void anAnswerBeforeTheWholeBodyReachesTheClient() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> answer = http2.send(
                    HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + "/unread"))
                            .method("DELETE", HttpRequest.BodyPublishers.ofByteArray(new byte[600 * 1024]))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(answer.body()).isEqualTo("/unread");
        }
    }

    @Test
    void aClientAskingHttp11GetsIt() throws Exception {
        HttpResponse<String> answer = http1.send(get("/x"), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
        assertThat(answer.body()).isEqualTo("/x");
    }

    @Test
    void requestsInFlightShareOneConnection() throws Exception {
        http2.send(get("/first"), HttpResponse.BodyHandlers.ofString());
        List<CompletableFuture<HttpResponse<String>>> answers = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            answers.add(http2.sendAsync(get("/" + i), HttpResponse.BodyHandlers.ofString()));
        }
        for (var answer : answers) {
            assertThat(answer.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(server.connections()).isEqualTo(1);
    }

    /**
     * A short request that ends beside a long one on the same connection does not start the wait for a next head
     * (one second in these bounds): the long one, a watch, say, is still being served and must not be cut.
     */
    @Test
    void aRequestEndingBesideAnotherDoesNotCloseTheConnection() throws Exception {
        http2.send(get("/first"), HttpResponse.BodyHandlers.ofString());
        CompletableFuture<HttpResponse<String>> held =
                http2.sendAsync(get("/hold"), HttpResponse.BodyHandlers.ofString());
        Thread.sleep(200);
        assertThat(http2.send(get("/short"), HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("/short");
        Thread.sleep(2500);
        release.countDown();
        HttpResponse<String> answer = held.get(10, TimeUnit.SECONDS);
        assertThat(answer.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(answer.body()).isEqualTo("/hold");
    }

    /**
     * The agent's JVM options ({@code agent.options}) bound the HTTP/2 receive windows of its clients: an answer the
     * agent is slow to read (a watch in a burst) waits at the server, not in the agent's heap. The JDK client's own
     * windows (16 MB a stream, 32 MB a connection) let a server push this whole 8 MB answer unread.
     */
    @Test
    void theAgentsWindowsBoundWhatAnUnreadAnswerParksInTheClient() throws Exception {
        java.util.Map<String, String> windows = new java.util.HashMap<>();
        try (java.io.InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/drover/agent.options")) {
            for (String option : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\\s+")) {
                if (option.startsWith("-Djdk.httpclient.")) {
                    String[] kv = option.substring(2).split("=", 2);
                    windows.put(kv[0], kv[1]);
                }
            }
        }
        assertThat(windows).containsKeys("jdk.httpclient.windowsize", "jdk.httpclient.connectionWindowSize");
        windows.forEach(System::setProperty);
        try (HttpClient agentLike = HttpClient.newBuilder().sslContext(trusting).build()) {
            java.util.concurrent.atomic.AtomicReference<java.util.concurrent.Flow.Subscription> unread =
                    new java.util.concurrent.atomic.AtomicReference<>();
            CompletableFuture<HttpResponse<Void>> answer = agentLike.sendAsync(
                    get("/big"),
                    info -> HttpResponse.BodySubscribers.fromSubscriber(
                            new java.util.concurrent.Flow.Subscriber<List<java.nio.ByteBuffer>>() {
                                @Override
                                public void onSubscribe(java.util.concurrent.Flow.Subscription subscription) {
                                    unread.set(subscription); // and never asks for a byte
                                }

                                @Override
                                public void onNext(List<java.nio.ByteBuffer> item) {}

                                @Override
                                public void onError(Throwable throwable) {}

                                @Override
                                public void onComplete() {}
                            }));
            Thread.sleep(1500);
            assertThat(written.get())
                    .as("written to a client reading nothing")
                    .isPositive()
                    .isLessThan(2L << 20);
            unread.get().cancel();
            answer.cancel(true);
        } finally {
            windows.keySet().forEach(System::clearProperty);
        }
    }

    /**
     * Rapid reset (CVE-2023-44487): a client that opens streams and cancels each at once makes the server start work
     * it never has to finish. The server tells that connection to go away (ENHANCE_YOUR_CALM, past 128 resets a
     * second: Jetty's rate control) and serves other clients meanwhile.
     */
    @Test
    void aRapidResetFloodLosesItsConnection() throws Exception {
        try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket)
                trusting.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), server.port())) {
            javax.net.ssl.SSLParameters alpn = socket.getSSLParameters();
            alpn.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(alpn);
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            assertThat(socket.getApplicationProtocol()).isEqualTo("h2");
            java.io.DataOutputStream out =
                    new java.io.DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream(), 1 << 16));
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            frame(out, 0x4, 0, 0, new byte[0]); // SETTINGS, none
            // GET https://localhost/ in HPACK: :method GET, :scheme https, :path / (static table), :authority literal
            byte[] authority = "localhost".getBytes(StandardCharsets.US_ASCII);
            java.io.ByteArrayOutputStream get = new java.io.ByteArrayOutputStream();
            get.write(new byte[] {(byte) 0x82, (byte) 0x87, (byte) 0x84, 0x01, (byte) authority.length});
            get.write(authority);
            try {
                for (int stream = 1; stream < 2000; stream += 2) {
                    frame(out, 0x1, 0x5, stream, get.toByteArray()); // HEADERS, END_STREAM | END_HEADERS
                    frame(out, 0x3, 0, stream, new byte[] {0, 0, 0, 0x8}); // RST_STREAM, CANCEL
                }
                out.flush();
            } catch (java.io.IOException closed) {
                // the server closed the connection under the flood: what is asked for
            }
            assertThat(goAwayError(new java.io.DataInputStream(socket.getInputStream())))
                    .as("the flooding connection is told to go away: ENHANCE_YOUR_CALM")
                    .isEqualTo(0xb);
        }
        HttpResponse<String> other = http2.send(get("/x"), HttpResponse.BodyHandlers.ofString());
        assertThat(other.body()).isEqualTo("/x");
    }

    /** Writes one HTTP/2 frame. */
    static void frame(java.io.DataOutputStream out, int type, int flags, int stream, byte[] payload)
            throws java.io.IOException {
        out.writeByte(payload.length >>> 16);
        out.writeShort(payload.length & 0xFFFF);
        out.writeByte(type);
        out.writeByte(flags);
        out.writeInt(stream);
        out.write(payload);
    }

    /** Reads frames until a GOAWAY and returns its error code; -1 when the connection ends or stays quiet first. */
    static int goAwayError(java.io.DataInputStream in) {
        try {
            while (true) {
                int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
                int type = in.readUnsignedByte();
                in.readUnsignedByte();
                in.readInt();
                byte[] payload = in.readNBytes(length);
                if (type == 0x7) {
                    return java.nio.ByteBuffer.wrap(payload, 4, 4).getInt();
                }
            }
        } catch (java.io.IOException closedOrQuiet) {
            return -1;
        }
    }
}
