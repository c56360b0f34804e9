package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import dev.drover.httpapi.AgentCertificate;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientSocketCloseTest {

    @TempDir
    Path dir;

    @Test
    void aServerThatNeverAnswersTheCloseIsDroppedAfterAWhile() throws Exception {
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        try (SSLServerSocket server = (SSLServerSocket) identity.sslContext()
                .getServerSocketFactory()
                .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // accepts the upgrade, then reads nothing and answers nothing
            Thread silent = Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    StringBuilder head = new StringBuilder();
                    while (!head.toString().endsWith("\r\n\r\n")) {
                        head.append((char) in.read());
                    }
                    Matcher key =
                            Pattern.compile("(?i)Sec-WebSocket-Key: *(\\S+)").matcher(head);
                    key.find();
                    String accept = Base64.getEncoder()
                            .encodeToString(MessageDigest.getInstance("SHA-1")
                                    .digest((key.group(1) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
                                            .getBytes(StandardCharsets.US_ASCII)));
                    s.getOutputStream()
                            .write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                            + "Sec-WebSocket-Accept: " + accept + "\r\nSec-WebSocket-Protocol: "
                                            + Channels.V5 + "\r\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    Thread.sleep(60_000);
                } catch (Exception e) {
                    // the test is over
                }
            });
            CountDownLatch closed = new CountDownLatch(1);
            ClientSocket socket = ClientSocket.openOwning(
                    HttpClient.newBuilder()
                            .sslContext(dev.drover.httpapi.Pinning.to(identity.fingerprint()))
                            .build(),
                    URI.create("wss://127.0.0.1:" + server.getLocalPort() + "/x/exec"),
                    Map.of(),
                    Channels.PROTOCOLS,
                    new MessageReceiver() {
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
                    },
                    Duration.ofSeconds(10));
            socket.close(null);
            assertThat(closed.await(ClientSocket.CLOSE_WAIT.toSeconds() + 10, TimeUnit.SECONDS))
                    .as("the session ends though the server never answered the close")
                    .isTrue();
            silent.interrupt();
            silent.join(5_000);
        }
    }
}
