package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.sun.net.httpserver.HttpServer;
import dev.drover.cli.kube.KubeClient;
import dev.drover.cli.kube.KubeTarget;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Answers the plugin's own client reads whole are bounded in time and in size, whoever sends them. */
class DirectAnswersTest {

    @TempDir
    Path dir;

    HttpServer server;
    final CountDownLatch done = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        server.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        // headers at once, then a byte now and then: the wait for the answer to begin is over, its body never ends
        server.createContext("/apis/drover.dev/", x -> {
            x.sendResponseHeaders(200, 1000);
            try (OutputStream out = x.getResponseBody()) {
                while (!done.await(100, TimeUnit.MILLISECONDS)) {
                    out.write(' ');
                    out.flush();
                }
            } catch (InterruptedException | IOException e) {
                // the test is over, or the client gave up
            }
        });
        // stats without end: a JSON string that never closes
        server.createContext("/apis/agent.drover.dev/", x -> {
            x.sendResponseHeaders(200, 0);
            byte[] chunk = "x".repeat(64 << 10).getBytes(StandardCharsets.US_ASCII);
            try (OutputStream out = x.getResponseBody()) {
                out.write("{\"allocation\": \"".getBytes(StandardCharsets.US_ASCII));
                for (int i = 0; i < 1024 && done.getCount() > 0; i++) { // 64 MiB at most
                    out.write(chunk);
                }
            } catch (IOException e) {
                // the client stopped reading
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        done.countDown();
        server.stop(0);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Test
    void anAnswerThatTricklesInIsGivenUpAtTheDeadline() {
        KubeTarget target = new KubeTarget(
                URI.create(url()), null, null, null, false, null, null, null, null, null, null, null, null, null);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            try (KubeClient client = KubeClient.open(target, line -> {})) {
                DirectCalls calls = new DirectCalls(client, Duration.ofMillis(700));
                assertThatThrownBy(() -> calls.allocation("team-a", "web"))
                        .isInstanceOf(CommandFailure.class)
                        .hasMessage("reading the API server's answer: the answer did not arrive whole within 700 ms");
            }
        });
    }

    @Test
    void statsWithoutEndAreNotReadWithoutEnd() throws Exception {
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                clusters: [{name: c, cluster: {server: "%s"}}]
                contexts: [{name: x, context: {cluster: c, namespace: team-a}}]
                current-context: x
                """.formatted(url()));
        KubectlDroverTest.Run r = assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () -> KubectlDroverTest.run("stats", "web", "--kubeconfig", kubeconfig.toString()));
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .isEqualTo("kubectl drover: reading the API server's answer: the answer is larger than 8 MiB\n");
    }
}
