package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23: a script waits for a batch allocation as for a Job, with the real {@code kubectl wait
 * --for=condition=Complete} (or {@code Failed}), on the local cluster with the agent jar.
 */
class TerminalConditionsIT {

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("terminal-conditions-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--metrics-port",
                        Integer.toString(AgentIT.freePort()),
                        "--api-port",
                        "-1")
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** A batch allocation of two mock tasks that run a moment and exit with {@code exitCode}, never restarted. */
    static String batch(String name, int exitCode) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  type: Batch
                  restartPolicy: {attempts: 0, mode: Fail}
                  tasks:
                  - name: first
                    driver: mock
                    config: {runFor: 300ms}
                  - name: second
                    driver: mock
                    config: {runFor: 600ms, exitCode: %d}
                """.formatted(name, exitCode);
    }

    static String condition(String alloc, String type, String field) {
        return kubectl.allocJsonpath(alloc, ".status.conditions[?(@.type==\"" + type + "\")]." + field);
    }

    @Test
    void kubectlWaitsForABatchThatCompletes() {
        kubectl.runWithInput(batch("batch", 0), "apply", "-f", "-").assertOk();

        var waited = kubectl.run("wait", "--for=condition=Complete", "alloc/batch", "--timeout=60s");

        assertThat(waited.exitCode()).as(waited.err()).isZero();
        assertThat(waited.out()).contains("condition met");
        assertThat(condition("batch", "Complete", "reason")).isEqualTo("TasksComplete");
        assertThat(condition("batch", "Complete", "message"))
                .isEqualTo("All tasks have completed: \"first\" exited with code 0; \"second\" exited with code 0");
        assertThat(condition("batch", "Failed", "status"))
                .as("absent, as on a Job")
                .isEmpty();
    }

    @Test
    void kubectlWaitsForABatchThatFails() {
        kubectl.runWithInput(batch("broken", 3), "apply", "-f", "-").assertOk();

        var waited = kubectl.run("wait", "--for=condition=Failed", "alloc/broken", "--timeout=60s");

        assertThat(waited.exitCode()).as(waited.err()).isZero();
        assertThat(condition("broken", "Failed", "reason")).isEqualTo("RestartsExhausted");
        assertThat(condition("broken", "Failed", "message"))
                .startsWith("Task \"second\" failed: NotRestarting: ")
                .endsWith("; it last exited with code 3");
        assertThat(condition("broken", "Complete", "status")).isEmpty();
    }
}
