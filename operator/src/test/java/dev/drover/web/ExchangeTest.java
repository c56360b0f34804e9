package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.httpapi.AgentCertificate;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a client of a {@link JettyHttps} server sees of the replies an {@link Exchange} sends, on the wire. */
class ExchangeTest {

    @TempDir
    Path dir;

    JettyHttps server;
    SSLContext client;
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicReference<String> secondReply = new AtomicReference<>();

    @BeforeEach
    void start() throws Exception {
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        client = SSLContext.getInstance("TLS");
        client.init(null, new TrustManager[] {new TrustingAllCertificates()}, null);
        server = JettyHttps.start(
                "test",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                identity.sslContext(),
                false,
                this::handle,
                List.of());
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.close();
    }

    private void handle(Exchange ex) throws IOException {
        switch (ex.rawPath()) {
            case "/whole" -> ex.send(200, "text/plain", "hello".getBytes(StandardCharsets.US_ASCII));
            case "/empty" -> ex.send(404, "text/plain", new byte[0]);
            case "/none" -> ex.send(204, "text/plain", new byte[0]);
            case "/late" -> {
                try (OutputStream out = ex.stream(200, "text/plain")) {
                    release.await(10, TimeUnit.SECONDS);
                    out.write("late".getBytes(StandardCharsets.US_ASCII));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            case "/twice" -> {
                ex.send(200, "text/plain", "first".getBytes(StandardCharsets.US_ASCII));
                try {
                    ex.send(500, "text/plain", "second".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException refused) {
                    secondReply.set(refused.getMessage() + "; started " + ex.started());
                }
            }
            default -> {
                String asked = ex.method() + " " + ex.rawPath() + " query=" + ex.rawQuery() + " first="
                        + ex.header("x-a") + " all=" + ex.headers("X-A") + " names="
                        + ex.headers().keySet().stream()
                                .filter(n -> n.equalsIgnoreCase("x-a"))
                                .toList();
                ex.send(200, "text/plain", asked.getBytes(StandardCharsets.US_ASCII));
            }
        }
    }

    private SSLSocket connect() throws IOException {
        return JettyHttpsBoundsTest.connect(client, server.port(), Duration.ofSeconds(5));
    }

    /** Sends {@code request} and reads its answer's status line and headers, nothing after them. */
    private static String head(SSLSocket socket, String request) throws IOException {
        socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = socket.getInputStream().read();
            if (b < 0) {
                throw new IOException("the server closed the connection after: " + head);
            }
            head.append((char) b);
        }
        return head.toString();
    }

    private static String request(String method, String target) {
        return method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    }

    @Test
    void aWholeReplyHasItsLengthAndAHeadGetsTheLengthWithoutTheBody() throws Exception {
        try (SSLSocket socket = connect()) {
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/whole")))
                    .startsWith("HTTP/1.1 200 ")
                    .contains("Content-Type: text/plain", "Content-Length: 5")
                    .endsWith("\r\n\r\nhello");
            assertThat(head(socket, request("HEAD", "/whole")))
                    .startsWith("HTTP/1.1 200 ")
                    .contains("Content-Length: 5");
            // the HEAD's answer has no body: the next answer on the connection follows its headers at once
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/empty")))
                    .startsWith("HTTP/1.1 404 ");
        }
    }

    @Test
    void anEmptyReplyIsOfLengthZeroAndA204HasNoLength() throws Exception {
        try (SSLSocket socket = connect()) {
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/empty")))
                    .startsWith("HTTP/1.1 404 ")
                    .contains("Content-Length: 0")
                    .doesNotContain("chunked");
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/none")))
                    .startsWith("HTTP/1.1 204 ")
                    .doesNotContainIgnoringCase("content-length")
                    .doesNotContain("chunked");
        }
    }

    @Test
    void aStreamedReplysStatusGoesOutBeforeItsFirstByte() throws Exception {
        try (SSLSocket socket = connect()) {
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/late")))
                    .startsWith("HTTP/1.1 200 ")
                    .contains("Transfer-Encoding: chunked");
            release.countDown();
            String rest = new String(socket.getInputStream().readNBytes(9), StandardCharsets.US_ASCII);
            assertThat(rest).isEqualTo("4\r\nlate\r\n");
        }
    }

    @Test
    void aSecondReplyIsRefusedAndTheFirstStands() throws Exception {
        try (SSLSocket socket = connect()) {
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/twice")))
                    .startsWith("HTTP/1.1 200 ")
                    .endsWith("first");
        }
        assertThat(secondReply.get()).isEqualTo("a reply has begun already: 200; started true");
    }

    @Test
    void theTargetIsAsSentAndHeadersAreFoundInAnyCase() throws Exception {
        try (SSLSocket socket = connect()) {
            String asked = "PUT /a%2Fb?q=%41&r HTTP/1.1\r\nHost: localhost\r\nX-A: 1\r\nx-a: 2\r\n"
                    + "Content-Length: 0\r\n\r\n";
            assertThat(JettyHttpsBoundsTest.exchange(socket, asked))
                    .endsWith("PUT /a%2Fb query=q=%41&r first=1 all=[1, 2] names=[X-A, x-a]");
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/plain")))
                    .endsWith("GET /plain query=null first=null all=[] names=[]");
        }
    }

    @Test
    void aTargetThatIsNoUriIsTheClientsError() throws Exception {
        try (SSLSocket socket = connect()) {
            assertThat(JettyHttpsBoundsTest.exchange(socket, request("GET", "/a%zz")))
                    .startsWith("HTTP/1.1 400 ");
        }
    }
}
