package dev.drover.taskrunner.checks;

import static dev.drover.api.v1alpha1.CheckStatus.Status.CRITICAL;
import static dev.drover.api.v1alpha1.CheckStatus.Status.PASSING;
import static dev.drover.api.v1alpha1.CheckStatus.Status.WARNING;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckHeader;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckType;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HttpProbeTest {

    /** What the test server saw of one request. */
    record Seen(String method, String uri, Headers headers) {}

    final HttpProbe probe = new HttpProbe();
    final BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
    HttpServer server;
    ServerSocket raw;

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.stop(0);
        }
        if (raw != null) {
            raw.close();
        }
    }

    interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    int serve(Handler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress(TcpProbe.LOOPBACK, 0), 0);
        server.createContext("/", exchange -> {
            try (exchange) {
                seen.add(new Seen(
                        exchange.getRequestMethod(),
                        exchange.getRequestURI().toString(),
                        exchange.getRequestHeaders()));
                handler.handle(exchange);
            }
        });
        server.start();
        return server.getAddress().getPort();
    }

    static Handler answer(int status, String body) {
        return exchange -> {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
            exchange.getResponseBody().write(bytes);
        };
    }

    static Check check(int port) {
        Check c = new Check("web", CheckType.HTTP);
        c.setPort(new IntOrString(port));
        c.setPath("/health");
        return c;
    }

    ProbeResult run(Check check) throws InterruptedException {
        return probe.run(check, request -> {
            throw new AssertionError("an http check runs no command");
        });
    }

    @Test
    void twoHundredPassesAndSaysCodeAndBody() throws Exception {
        int port = serve(answer(200, "all good\n"));
        ProbeResult result = run(check(port));
        assertThat(result).isEqualTo(new ProbeResult(PASSING, "HTTP 200: all good"));
        Seen request = seen.take();
        assertThat(request.method()).isEqualTo("GET");
        assertThat(request.uri()).isEqualTo("/health");
        assertThat(request.headers().getFirst("Host")).isEqualTo("127.0.0.1:" + port);
        assertThat(request.headers().getFirst("User-Agent")).isEqualTo(HttpProbe.USER_AGENT);
    }

    @Test
    void tooManyRequestsWarns() throws Exception {
        int port = serve(answer(429, "slow down"));
        assertThat(run(check(port))).isEqualTo(new ProbeResult(WARNING, "HTTP 429: slow down"));
    }

    @Test
    void serverErrorIsCritical() throws Exception {
        int port = serve(answer(503, "backend down"));
        assertThat(run(check(port))).isEqualTo(new ProbeResult(CRITICAL, "HTTP 503: backend down"));
    }

    @Test
    void emptyBodySaysOnlyTheCode() throws Exception {
        int port = serve(answer(204, ""));
        assertThat(run(check(port))).isEqualTo(new ProbeResult(PASSING, "HTTP 204"));
    }

    @Test
    void redirectIsCriticalAndNotFollowed() throws Exception {
        int port = serve(exchange -> {
            exchange.getResponseHeaders().add("Location", "/elsewhere");
            exchange.sendResponseHeaders(302, -1);
        });
        assertThat(run(check(port))).isEqualTo(new ProbeResult(CRITICAL, "HTTP 302"));
        assertThat(seen).hasSize(1);
    }

    @Test
    void chunkedBodyIsDecoded() throws Exception {
        int port = serve(exchange -> {
            exchange.sendResponseHeaders(500, 0); // length 0: chunked
            exchange.getResponseBody().write("backend ".getBytes(StandardCharsets.UTF_8));
            exchange.getResponseBody().flush();
            exchange.getResponseBody().write("down".getBytes(StandardCharsets.UTF_8));
        });
        assertThat(run(check(port))).isEqualTo(new ProbeResult(CRITICAL, "HTTP 500: backend down"));
    }

    @Test
    void sendsMethodQueryAndTheCheckHeadersHostIncluded() throws Exception {
        int port = serve(answer(200, "ok"));
        Check c = check(port);
        c.setMethod("POST");
        c.setPath("/health?deep=1");
        c.setHeaders(List.of(new CheckHeader("X-Probe", "drover"), new CheckHeader("Host", "app.example")));
        assertThat(run(c).status()).isEqualTo(PASSING);
        Seen request = seen.take();
        assertThat(request.method()).isEqualTo("POST");
        assertThat(request.uri()).isEqualTo("/health?deep=1");
        assertThat(request.headers().getFirst("X-Probe")).isEqualTo("drover");
        assertThat(request.headers().get("Host")).containsExactly("app.example");
    }

    @Test
    void headRequestReadsNoBody() throws Exception {
        int port = serve(exchange -> exchange.sendResponseHeaders(200, 5000)); // HEAD: a length, no body
        Check c = check(port);
        c.setMethod("HEAD");
        assertThat(run(c)).isEqualTo(new ProbeResult(PASSING, "HTTP 200"));
    }

    @Test
    void aHeaderThatFramesTheExchangeIsCriticalWithWhatToDo() throws Exception {
        Check c = check(1);
        c.setHeaders(List.of(new CheckHeader("Connection", "keep-alive")));
        ProbeResult result = run(c);
        assertThat(result.status()).isEqualTo(CRITICAL);
        assertThat(result.output())
                .isEqualTo("header \"Connection\" is set by the probe itself; remove it from the check");
    }

    @Test
    void aHeaderValueWithALineBreakIsRefusedNotSent() throws Exception {
        int port = serve(answer(200, "ok"));
        Check c = check(port);
        c.setHeaders(List.of(new CheckHeader("X-A", "1\r\nX-Injected: yes")));
        ProbeResult result = run(c);
        assertThat(result.status()).isEqualTo(CRITICAL);
        assertThat(result.output()).contains("\"X-A\"").contains("control character");
        assertThat(seen).isEmpty();
    }

    @Test
    void refusedConnectionIsCritical() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, TcpProbe.LOOPBACK)) {
            port = s.getLocalPort();
        }
        assertThat(run(check(port))).isEqualTo(new ProbeResult(CRITICAL, "connection refused"));
    }

    @Test
    void serverThatNeverAnswersTimesOut() throws Exception {
        raw = new ServerSocket(0, 1, TcpProbe.LOOPBACK); // the kernel accepts; nobody ever answers
        Check c = check(raw.getLocalPort());
        c.setTimeout("300ms");
        long start = System.nanoTime();
        assertThat(run(c)).isEqualTo(new ProbeResult(CRITICAL, "timed out after 300ms"));
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(3000);
    }

    @Test
    void serverTricklingItsAnswerIsHeldToTheWholeTimeout() throws Exception {
        int port = rawServer(out -> {
            for (int i = 0; i < 1000; i++) { // a header byte every 20 ms: each read is quick, the whole is not
                out.write('X');
                out.flush();
                Thread.sleep(20); // the misbehaving server's pace, not a wait of the test's
            }
        });
        Check c = check(port);
        c.setTimeout("300ms");
        long start = System.nanoTime();
        assertThat(run(c)).isEqualTo(new ProbeResult(CRITICAL, "timed out after 300ms"));
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(3000);
    }

    @Test
    void hugeHeadIsCutOff() throws Exception {
        int port = rawServer(out -> {
            out.write("HTTP/1.1 200 OK\r\nX-Big: ".getBytes(StandardCharsets.US_ASCII));
            byte[] filler = new byte[64 * 1024];
            java.util.Arrays.fill(filler, (byte) 'a');
            out.write(filler);
            out.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        });
        assertThat(run(check(port)))
                .isEqualTo(new ProbeResult(CRITICAL, "the response head is longer than 16384 bytes"));
    }

    @Test
    void hugeBodyIsNotReadBeyondItsStart() throws Exception {
        AtomicLong written = new AtomicLong();
        CountDownLatch ended = new CountDownLatch(1);
        int port = serve(exchange -> {
            try {
                exchange.sendResponseHeaders(500, 0);
                byte[] block = "x".repeat(8192).getBytes(StandardCharsets.US_ASCII);
                OutputStream out = exchange.getResponseBody();
                for (int i = 0; i < 128 * 1024; i++) { // 1 GiB, unless the probe hangs up, as it must
                    out.write(block);
                    written.addAndGet(block.length);
                }
            } finally {
                ended.countDown();
            }
        });
        ProbeResult result = run(check(port));
        assertThat(result.status()).isEqualTo(CRITICAL);
        assertThat(result.output()).startsWith("HTTP 500: xxxx").hasSizeLessThanOrEqualTo(CheckStatus.MAX_OUTPUT);
        ended.await();
        assertThat(written.get()).isLessThan(64L * 1024 * 1024);
    }

    @Test
    void controlCharactersOfTheBodyNeverReachTheOutput() throws Exception {
        int port = serve(answer(500, "line one\nline two\u001b[31m red\u0000"));
        assertThat(run(check(port)).output()).isEqualTo("HTTP 500: line one line two\uFFFD[31m red\uFFFD");
    }

    @Test
    void somethingElseThanHttpIsCriticalAndQuoted() throws Exception {
        int port = rawServer(out -> out.write("SSH-2.0-OpenSSH_9.6\r\n".getBytes(StandardCharsets.US_ASCII)));
        assertThat(run(check(port)))
                .isEqualTo(new ProbeResult(CRITICAL, "not an HTTP/1.x response: \"SSH-2.0-OpenSSH_9.6\""));
    }

    @Test
    void connectionClosedWithoutAnswerIsCritical() throws Exception {
        int port = rawServer(out -> {});
        assertThat(run(check(port))).isEqualTo(new ProbeResult(CRITICAL, "the connection closed without a response"));
    }

    @Test
    void interimContinueIsSkippedForTheFinalAnswer() throws Exception {
        int port = rawServer(
                out -> out.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokTRAILING"
                        .getBytes(StandardCharsets.US_ASCII)));
        assertThat(run(check(port))).isEqualTo(new ProbeResult(PASSING, "HTTP 200: ok"));
    }

    interface Script {
        void answer(OutputStream out) throws Exception;
    }

    /** A server that reads the request's head, answers with {@code script} and hangs up; once. */
    int rawServer(Script script) throws IOException {
        raw = new ServerSocket(0, 1, TcpProbe.LOOPBACK);
        Thread.ofVirtual().start(() -> {
            try (Socket s = raw.accept()) {
                InputStream in = s.getInputStream();
                int matched = 0;
                byte[] end = {'\r', '\n', '\r', '\n'};
                while (matched < 4) {
                    int b = in.read();
                    if (b < 0) {
                        return;
                    }
                    matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
                }
                script.answer(s.getOutputStream());
            } catch (Exception e) {
                // the probe hung up, as it may
            }
        });
        return raw.getLocalPort();
    }
}
