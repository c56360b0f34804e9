package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import dev.drover.podresources.FakePodResources;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 42, item 3, on the local cluster: the agent process with the fake plugin's two GPUs shares them with a Pod
 * the kubelet's PodResources API (a fake, on a Unix socket) says holds one.
 */
class PodHeldGpusIT {

    static final String HELD = "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f"; // examples/devices/fake-gpus.yaml
    static final String OTHER = "GPU-5d7e9a0b-6c1f-4e2a-8b3d-9c0e1f2a3b4c";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static FakePodResources kubelet;
    static AgentProcess agent;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        kubelet = FakePodResources.start(dir.resolve("kubelet.sock"));
        kubelet.hold("ml", "trainer-0", "nvidia.com/gpu", HELD);
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("pod-held-gpus-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--enable-raw-exec",
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "-1",
                        "--device-plugin",
                        "fake:"
                                + Path.of("..", "examples", "devices", "fake-gpus.yaml")
                                        .toAbsolutePath(),
                        "--pod-resources-socket",
                        kubelet.socket().toString())
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            kubectl.run("delete", "alloc", "--all", "--timeout=30s");
            agent.close();
        }
        if (kubelet != null) {
            kubelet.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String gpuJob(String name, int gpus) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  type: Batch
                  tasks:
                  - name: train
                    driver: raw_exec
                    config: {command: /bin/sleep, args: ["600"]}
                    resources:
                      devices: [{name: nvidia/gpu, count: %d}]
                """.formatted(name, gpus);
    }

    static String node(String jsonpath) {
        return kubectl.run("get", "node", "local", "-o", "jsonpath={" + jsonpath + "}")
                .assertOk()
                .out();
    }

    @Test
    void aGpuAPodHoldsIsShownOnTheNodeAndNeverGivenToAnAllocation() {
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        ("nvidia-gpu=" + HELD).equals(node(".metadata.annotations.drover\\.dev/devices-held-by-pods")));
        assertThat(node(".status.capacity.drover\\.dev/nvidia-gpu")).isEqualTo("2");
        assertThat(node(".status.allocatable.drover\\.dev/nvidia-gpu")).isEqualTo("1");

        kubectl.runWithInput(gpuJob("both", 2), "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("both", "Failed", Duration.ofSeconds(30));
        assertThat(kubectl.allocJsonpath("both", ".status.conditions[?(@.type==\"Admitted\")].reason"))
                .isEqualTo("OutOfdevices");

        kubectl.runWithInput(gpuJob("one", 1), "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("one", "Running", Duration.ofSeconds(30));
        assertThat(kubectl.allocJsonpath("one", ".status.allocatedDevices[0].ids[0]"))
                .isEqualTo(OTHER);
    }
}
