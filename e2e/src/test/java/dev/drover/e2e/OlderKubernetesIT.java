package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kubernetes 1.30 drops the CRD's {@code selectableFields}, so the agent's field selector on {@code spec.nodeName}
 * is refused there: with {@code --field-selector=false} (what docs/install.md tells such users) the agent watches
 * every allocation and still runs only its own node's.
 */
class OlderKubernetesIT {

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local", "other"))
                .withKubeconfig(dir.resolve("kubeconfig"))
                .withKubeVersion("1.30"));
        kubectl = new Kubectl(server.kubeconfig());
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("older-kubernetes-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "-1",
                        "--field-selector=false")
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            kubectl.run("delete", "alloc", "--all", "--timeout=30s");
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String service(String name, String node) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: %s
                  tasks:
                  - name: web
                    driver: mock
                    config: {runFor: 1h}
                """.formatted(name, node);
    }

    @Test
    void withoutTheFieldSelectorTheAgentRunsItsNodesAllocationsOnKubernetes130() throws Exception {
        assertThat(kubectl.run("get", "--raw", "/version").assertOk().out()).contains("\"minor\":\"30\"");
        assertThat(kubectl.run("get", "alloc", "--field-selector", "spec.nodeName=local")
                        .err())
                .as("what the agent's default watch would be told")
                .contains("field label not supported: spec.nodeName");

        kubectl.runWithInput(service("mine", "local"), "apply", "-f", "-").assertOk();
        kubectl.runWithInput(service("theirs", "other"), "apply", "-f", "-").assertOk();

        kubectl.waitForClientStatus("mine", "Running", Duration.ofSeconds(30));
        assertThat(kubectl.allocJsonpath("theirs", ".status.clientStatus"))
                .as("another node's allocation is left alone")
                .isEmpty();
    }
}
