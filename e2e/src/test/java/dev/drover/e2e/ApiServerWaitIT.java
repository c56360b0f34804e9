package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23: the agent jar started while its API server is down says so in one line per try, with no stack trace,
 * and starts once the API server serves; SIGTERM while it waits exits 0 at once.
 */
class ApiServerWaitIT {

    static final String UNREACHABLE = "drover: cannot reach the Kubernetes API server at ";

    @TempDir
    Path dir;

    LocalApiServer server;
    AgentProcess agent;

    @BeforeEach
    void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        agent = new AgentProcess(
                Files.createDirectories(Path.of("target", "agent-logs")).resolve("api-server-wait-it.log"),
                "--kubeconfig",
                AgentKubeconfig.forNode(server, "local", dir).toString(),
                "--node",
                "local",
                "--data-dir",
                dir.resolve("data").toString(),
                "--metrics-port",
                "-1",
                "--api-port",
                "-1");
        server.stopServing();
    }

    @AfterEach
    void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Starts the agent in the background (start() returns once it is ready) and waits for its first retry line. */
    CompletableFuture<AgentProcess> startWhileDown() {
        CompletableFuture<AgentProcess> started = CompletableFuture.supplyAsync(() -> {
            try {
                return agent.start();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions() // its log may not be there yet
                .until(() -> agent.alive() && agent.log().contains(UNREACHABLE));
        return started;
    }

    @Test
    void anAgentStartedBeforeItsApiServerSaysSoInOneLineAndStartsOnceItServes() throws Exception {
        CompletableFuture<AgentProcess> started = startWhileDown();

        String waiting = agent.log();
        assertThat(waiting.lines().filter(l -> l.contains(UNREACHABLE)))
                .first()
                .asString()
                .contains("WARN")
                .contains(server.url().getHost() + ":" + server.url().getPort())
                .contains("(connection refused); retrying in ");
        assertThat(waiting).as("no stack trace").doesNotContain("\tat ", "Exception");

        server.startServing();

        started.get(90, TimeUnit.SECONDS);
        assertThat(agent.log()).contains("drover: reached the Kubernetes API server at ", "is ready");
    }

    @Test
    void sigtermWhileWaitingExitsZeroAtOnce() throws Exception {
        startWhileDown();

        long begin = System.nanoTime();
        assertThat(agent.stop()).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - begin)).isLessThan(Duration.ofSeconds(5));
    }
}
