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
 * {@code nodeSharing: dedicated} against the local API server acting as Kubernetes 1.32, with the chart's RBAC for
 * that mode: the agent admits against its Node's allocatable (2 CPUs, 8Gi here) less what the Pods bound to its node
 * request (its own DaemonSet Pod's 50m included), and follows Pods as they come and go; Pods of other nodes do not
 * count.
 */
class DedicatedNodeIT {

    private static final String ADMITTED = ".status.conditions[?(@.type==\"Admitted\")]";

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
                .withKubeVersion("1.32"));
        kubectl = new Kubectl(server.kubeconfig());
        kubectl.runWithInput(pod("busy", "local", "1500m"), "apply", "-f", "-").assertOk();
        kubectl.runWithInput(pod("elsewhere", "other", "1"), "apply", "-f", "-").assertOk();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("dedicated-node-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--node-sharing",
                        "dedicated",
                        "--allocatable-cpu-millis",
                        "4000", // more than the Node's: the Node's is what counts
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "-1")
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

    static String pod(String name, String node, String cpu) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: %s
                  containers:
                  - name: app
                    image: registry.example/app:1
                    resources: {requests: {cpu: "%s", memory: 1Gi}}
                """.formatted(name, node, cpu);
    }

    static String alloc(String name, int cpuMillis) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: web
                    driver: mock
                    config: {runFor: 1h}
                    resources: {cpuMillis: %d}
                """.formatted(name, cpuMillis);
    }

    @Test
    void allocationsGetTheNodesAllocatableLessWhatItsPodsRequestAndMoreOnceAPodGoes() {
        kubectl.runWithInput(alloc("too-big", 1000), "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("too-big", "Failed", Duration.ofSeconds(30));
        assertThat(kubectl.allocJsonpath("too-big", ADMITTED + ".reason")).isEqualTo("OutOfcpu");
        assertThat(kubectl.allocJsonpath("too-big", ADMITTED + ".message"))
                .as("2 CPUs less the 1.5 of the Pod and the agent's 50m; the Pod on the other node does not count")
                .contains("requested 1000 millicores of CPU, 450 free of 450 allocatable");

        kubectl.runWithInput(alloc("fits", 400), "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("fits", "Running", Duration.ofSeconds(30));

        kubectl.run("delete", "pod", "busy", "--wait=false").assertOk();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> kubectl.run(
                                "get",
                                "node",
                                "local",
                                "-o",
                                "jsonpath={.metadata.annotations.drover\\.dev/allocatable-cpu-millis}")
                        .out()
                        .strip()
                        .equals("1950"));
        kubectl.runWithInput(alloc("fits-now", 1000), "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("fits-now", "Running", Duration.ofSeconds(30));
    }
}
