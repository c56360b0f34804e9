package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 7's acceptance on the local cluster: the agent process with the fake plugin's two GPUs. */
class DevicesIT {

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static dev.drover.local.LocalGateway gateway;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        data = dir.resolve("data");
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("devices-it.log"),
                        AgentKubeconfig.withGateway(
                                server,
                                dir,
                                "--kubeconfig",
                                AgentKubeconfig.forNode(server, "local", dir).toString(),
                                "--node",
                                "local",
                                "--data-dir",
                                data.toString(),
                                "--enable-raw-exec",
                                "--metrics-port",
                                "-1",
                                "--api-port",
                                "0",
                                "--device-plugin",
                                "fake:"
                                        + Path.of("..", "examples", "devices", "fake-gpus.yaml")
                                                .toAbsolutePath()))
                .start();
        gateway = AgentKubeconfig.gateway(server, dir); // kubectl drover stats goes through it
    }

    @AfterAll
    static void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (agent != null) {
            kubectl.run("delete", "alloc", "--all", "--timeout=30s");
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String gpuJob(String name, String runFor) {
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
                    config: {command: /bin/sh, args: ["-c", "echo $NVIDIA_VISIBLE_DEVICES > gpus.txt; echo \\\"cuda=[$CUDA_VISIBLE_DEVICES]\\\"; sleep %s"]}
                    env: [{name: CUDA_VISIBLE_DEVICES, value: "0,1"}]
                    resources:
                      devices: [{name: nvidia/gpu, count: 1}]
                """.formatted(name, runFor);
    }

    /** What the task printed to stdout, read through the aggregated API (kubectl drover logs). */
    static String stdoutOf(String alloc) {
        var logs = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "logs", alloc, "train");
        assertThat(logs.exitCode()).as(logs.err()).isZero();
        return logs.out().strip();
    }

    static void waitFor(String alloc, String clientStatus) {
        kubectl.waitForClientStatus(alloc, clientStatus, Duration.ofSeconds(30));
    }

    static String seenByTask(String alloc) throws Exception {
        Path file = data.resolve("allocs/default/" + alloc + "/train/gpus.txt");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Files.exists(file) && !Files.readString(file).isBlank());
        return Files.readString(file).strip();
    }

    @Test
    void twoGpusGoToTwoAllocationsAThirdFailsAndAFreedGpuIsReused() throws Exception {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> "2"
                        .equals(kubectl.run(
                                        "get",
                                        "node",
                                        "local",
                                        "-o",
                                        "jsonpath={.status.capacity.drover\\.dev/nvidia-gpu}")
                                .out()));
        assertThat(kubectl.run("get", "node", "local", "--show-labels")
                        .assertOk()
                        .out())
                .contains(
                        "drover.dev/gpu.product=Tesla-T4",
                        "drover.dev/gpu.count=2",
                        "drover.dev/gpu.memory=15360MiB",
                        "drover.dev/gpu.driver=550.54.15");

        kubectl.runWithInput(gpuJob("first", "600"), "apply", "-f", "-").assertOk();
        kubectl.runWithInput(gpuJob("second", "3"), "apply", "-f", "-").assertOk();
        waitFor("first", "Running");
        waitFor("second", "Running");
        String first = kubectl.allocJsonpath("first", ".status.allocatedDevices[0].ids[0]");
        String second = kubectl.allocJsonpath("second", ".status.allocatedDevices[0].ids[0]");
        assertThat(first).startsWith("GPU-").isNotEqualTo(second);
        assertThat(seenByTask("first")).isEqualTo(first);
        assertThat(seenByTask("second")).isEqualTo(second);
        assertThat(kubectl.allocJsonpath("first", ".status.allocatedDevices[0].model"))
                .isEqualTo("Tesla T4");

        kubectl.runWithInput(gpuJob("third", "600"), "apply", "-f", "-").assertOk();
        waitFor("third", "Failed");
        assertThat(kubectl.allocJsonpath("third", ".status.conditions[?(@.type==\"Admitted\")].reason"))
                .isEqualTo("OutOfdevices");
        assertThat(kubectl.allocJsonpath("third", ".status.conditions[?(@.type==\"Admitted\")].message"))
                .endsWith("device nvidia/gpu: asked 1, 0 free");

        // CUDA sees only the task's GPU, whatever the task's own env says
        await().atMost(Duration.ofSeconds(10)).until(() -> stdoutOf("first").contains("cuda="));
        assertThat(stdoutOf("first")).isEqualTo("cuda=[" + first + "]");
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: cpu-only, namespace: default}
                        spec:
                          nodeName: local
                          type: Batch
                          tasks:
                          - name: train
                            driver: raw_exec
                            config: {command: /bin/sh, args: ["-c", "echo \\"cuda=[${CUDA_VISIBLE_DEVICES-unset}]\\""]}
                        """, "apply", "-f", "-").assertOk();
        waitFor("cpu-only", "Complete");
        assertThat(stdoutOf("cpu-only")).as("a task given no GPU sees none").isEqualTo("cuda=[]");

        waitFor("second", "Complete"); // its GPU is released
        kubectl.runWithInput(gpuJob("fourth", "600"), "apply", "-f", "-").assertOk();
        waitFor("fourth", "Running");
        assertThat(kubectl.allocJsonpath("fourth", ".status.allocatedDevices[0].ids[0]"))
                .isEqualTo(second);

        agent.kill();
        agent.start();
        waitFor("first", "Running");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.allocJsonpath("first", ".status.allocatedDevices[0].ids[0]"))
                        .isEqualTo(first));
        assertThat(kubectl.allocJsonpath("fourth", ".status.allocatedDevices[0].ids[0]"))
                .isEqualTo(second);
        assertThat(kubectl.allocJsonpath("first", ".status.taskStates.train.restarts"))
                .isEqualTo("0");

        // kubectl drover stats, from the restarted agent: the reattached task's GPU as the fake plugin reports it
        var stats = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "stats", "first", "--json");
        assertThat(stats.exitCode()).as(stats.err()).isZero();
        var report = new com.fasterxml.jackson.databind.ObjectMapper().readTree(stats.out());
        var gpu = report.path("tasks").path("train").path("devices").path(0);
        assertThat(gpu.path("id").asText()).as(stats.out()).isEqualTo(first);
        assertThat(gpu.path("memoryTotalMiB").asLong()).isEqualTo(15360);
        assertThat(gpu.has("temperatureC")).isTrue();
        assertThat(report.path("devices").path(0).path("model").asText()).isEqualTo("Tesla T4");
        var table = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "stats", "first");
        assertThat(table.out()).contains("Devices", first, "/15360 MiB", "nvidia/gpu/Tesla T4");
    }
}
