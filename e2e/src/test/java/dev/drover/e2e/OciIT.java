package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.image.TestImage;
import dev.drover.image.TestRegistry;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Container images on the local cluster, as a user runs them: the agent jar for node {@code local} with the oci
 * driver, images from a real registry (Debian's {@code docker-registry}, TLS from a CA of the test's own) run by the
 * real runc, in task cgroups below this test's own cgroup (removed after), Allocations applied with the real
 * kubectl. Only processes these tests started are ended.
 */
class OciIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Path RUNC = Path.of("/usr/sbin/runc");
    private static final String BATCH =
            "  type: Batch\n  restartPolicy: {attempts: 0, interval: 1m, delay: 1s, mode: Fail}\n";

    @TempDir
    static Path dir;

    static TestRegistry registry;
    static TestRegistry privateRegistry;
    static TamperingProxy tampering;
    static String image;
    static Path readOnlyVolume;
    static LocalApiServer server;
    static dev.drover.local.LocalGateway gateway;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static String cgroupParent;

    @BeforeAll
    static void start() throws Exception {
        assertThat(RUNC)
                .as(RUNC + " is missing: install Debian's runc package (.ci/tools does)")
                .isExecutable();
        registry = TestRegistry.start(Files.createDirectory(dir.resolve("registry")), TestRegistry.Auth.NONE);
        registry.push(
                "apps/shell",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh", "-c"), "Env", List.of("PATH=/bin")),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP)
                                .busybox()
                                .file("etc/motd", "from the image\n", 0644)));
        image = registry.host() + "/apps/shell:1";
        privateRegistry = TestRegistry.start(Files.createDirectory(dir.resolve("private")), TestRegistry.Auth.HTPASSWD);
        privateRegistry.push(
                "team/private",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh", "-c"), "Env", List.of("PATH=/bin")),
                        false,
                        new TestImage.Layer(TestImage.Compression.ZSTD).busybox()));
        tampering = TamperingProxy.start(registry.host(), registry.tls(), dir.resolve("tampering-ca.pem"));
        Path cas = dir.resolve("registry-cas.pem");
        Files.writeString(
                cas,
                Files.readString(registry.caFile())
                        + Files.readString(privateRegistry.caFile())
                        + Files.readString(dir.resolve("tampering-ca.pem")));
        readOnlyVolume = Files.createDirectories(dir.resolve("volumes/reference"));
        Files.writeString(readOnlyVolume.resolve("data.txt"), "kept\n");
        Path gpus = dir.resolve("fake-gpus.yaml");
        Files.writeString(gpus, """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                      - id: GPU-b
                """);
        Path cdi = Files.createDirectories(dir.resolve("cdi"));
        Path config = dir.resolve("agent.yaml");
        Files.writeString(config, """
                hostVolumes:
                  reference: {path: %s, readOnly: true, namespaces: ["*"]}
                devicePluginConfig:
                  fake: {cdiSpecDir: %s}
                cdiSpecDirs: [%s]
                """.formatted(readOnlyVolume, cdi, cdi));

        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        // below target/: each task has a /tmp of its own, so the data dir is not in one
        data = Files.createTempDirectory(
                Files.createDirectories(Path.of("target", "oci-it").toAbsolutePath()), "data");
        cgroupParent = TestCgroups.newName();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("oci-it.log"),
                        AgentKubeconfig.withGateway(
                                server,
                                dir,
                                "--kubeconfig",
                                AgentKubeconfig.forNode(server, "local", dir).toString(),
                                "--node",
                                "local",
                                "--data-dir",
                                data.toString(),
                                "--enable-oci",
                                "--oci-runtime",
                                RUNC.toString(),
                                "--registry-ca-file",
                                cas.toString(),
                                "--config",
                                config.toString(),
                                "--device-plugin",
                                "fake:" + gpus,
                                "--cgroup-parent",
                                cgroupParent,
                                "--metrics-port",
                                "-1",
                                "--api-port",
                                "0"))
                .start();
        gateway = AgentKubeconfig.gateway(server, dir);
    }

    @AfterAll
    static void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (cgroupParent != null) {
            TestCgroups.remove(cgroupParent);
        }
        if (server != null) {
            server.close();
        }
        if (registry != null) {
            registry.close();
        }
        if (privateRegistry != null) {
            privateRegistry.close();
        }
        if (tampering != null) {
            tampering.close();
        }
    }

    static String oci(String name, String spec, String config, String resources) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                %s  tasks:
                  - name: main
                    driver: oci
                    config: %s
                    killTimeout: 2s
                    resources: %s
                """.formatted(name, spec, config, resources);
    }

    private static String terminated(String alloc, String field) {
        return kubectl.allocJsonpath(alloc, ".status.taskStates.main.events[?(@.type==\"Terminated\")]." + field);
    }

    @Test
    void anImagesTaskRunsWritesItsLogAndEndsWithItsExitCode() throws IOException {
        String config = "{image: \"%s\", args: [\"cat /etc/motd; echo in $(pwd); exit 3\"], workingDir: /local}"
                .formatted(image);
        kubectl.runWithInput(oci("image", BATCH, config, "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("image", "Failed", TIMEOUT);

        assertThat(terminated("image", "exitCode")).isEqualTo("3");
        String types = kubectl.allocJsonpath("image", ".status.taskStates.main.events[*].type");
        assertThat(types)
                .as("Downloading too, unless another test pulled it first")
                .contains("Downloaded", "Started", "Terminated");
        Path stdout = data.resolve("allocs/default/image/alloc/logs/main.stdout.0");
        assertThat(Files.readString(stdout)).isEqualTo("from the image\nin /local\n");
        kubectl.run("delete", "alloc", "image", "--timeout=30s").assertOk();
    }

    @Test
    void pullPolicyNeverWithoutTheImageOnTheNodeFailsSayingSo() {
        String config = "{image: \"%s/apps/absent:1\", pullPolicy: Never}".formatted(registry.host());
        kubectl.runWithInput(oci("never", BATCH, config, "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("never", "Failed", TIMEOUT);

        String messages = kubectl.allocJsonpath("never", ".status.taskStates.main.events[*].message");
        assertThat(messages).contains("is not on this node, and its pullPolicy is Never");
        kubectl.run("delete", "alloc", "never", "--timeout=30s").assertOk();
    }

    @Test
    void aContainerPastItsMemoryLimitIsReportedOomKilled() {
        String config = "{image: \"%s\", args: [\"head -c 209715200 /dev/zero | tail\"]}".formatted(image);
        kubectl.runWithInput(oci("oom", BATCH, config, "{memoryMB: 64}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("oom", "Failed", TIMEOUT);

        assertThat(terminated("oom", "oomKilled")).isEqualTo("true");
        assertThat(terminated("oom", "message")).startsWith("OOM Killed");
        kubectl.run("delete", "alloc", "oom", "--timeout=30s").assertOk();
    }

    @Test
    void aPrivateImageIsPulledWithTheAllocationsPullSecretAndRefusedWithoutIt() {
        kubectl.runWithInput(
                        """
                        apiVersion: v1
                        kind: Namespace
                        metadata:
                          name: team
                          labels: {drover.dev/workloads: enabled}
                        ---
                        apiVersion: v1
                        kind: ServiceAccount
                        metadata: {name: puller, namespace: team}
                        ---
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: pull-secret, namespace: team}
                        rules:
                        - {apiGroups: [""], resources: [secrets], resourceNames: [regcred], verbs: [get]}
                        ---
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: pull-secret, namespace: team}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pull-secret}
                        subjects:
                        - {kind: ServiceAccount, name: puller, namespace: team}
                        ---
                        apiVersion: v1
                        kind: Secret
                        metadata: {name: regcred, namespace: team}
                        type: kubernetes.io/dockerconfigjson
                        data:
                          .dockerconfigjson: %s
                        """.formatted(java.util.Base64.getEncoder()
                                .encodeToString(TestRegistry.dockerConfig(
                                        privateRegistry.host(), TestRegistry.USER, TestRegistry.PASSWORD))),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        String privateImage = privateRegistry.host() + "/team/private:1";
        String batch = BATCH + "  serviceAccountName: puller\n";
        String config = "{image: \"%s\", pullPolicy: Always, args: [\"echo private\"]}".formatted(privateImage);

        kubectl.runWithInput(
                        oci("anonymous", batch, config, "{}").replace("namespace: default", "namespace: team"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.runWithInput(
                        oci("authorized", batch + "  imagePullSecrets: [{name: regcred}]\n", config, "{}")
                                .replace("namespace: default", "namespace: team"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("authorized", "Complete", TIMEOUT, "team");
        kubectl.waitForClientStatus("anonymous", "Failed", TIMEOUT, "team");

        assertThat(kubectl.allocJsonpath("anonymous", ".status.taskStates.main.events[*].type", "team"))
                .contains("PullFailed");
        assertThat(kubectl.allocJsonpath("authorized", ".status.taskStates.main.events[*].type", "team"))
                .contains("Downloading", "Downloaded")
                .doesNotContain("PullFailed");
        kubectl.run("delete", "alloc", "-n", "team", "anonymous", "authorized", "--timeout=30s")
                .assertOk();
    }

    @Test
    void aReadOnlyHostVolumeIsReadButCannotBeWritten() throws IOException {
        String spec = BATCH + "  volumes: [{name: ref, hostVolume: reference}]\n";
        String config = ("{image: \"%s\", volumeMounts: [{volume: ref, destination: /mnt/ref}],"
                        + " args: [\"cat /mnt/ref/data.txt; echo changed > /mnt/ref/data.txt || echo refused\"]}")
                .formatted(image);
        kubectl.runWithInput(oci("volume", spec, config, "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("volume", "Complete", TIMEOUT);

        assertThat(Files.readString(data.resolve("allocs/default/volume/alloc/logs/main.stdout.0")))
                .isEqualTo("kept\nrefused\n");
        assertThat(Files.readString(data.resolve("allocs/default/volume/alloc/logs/main.stderr.0")))
                .contains("Read-only file system");
        assertThat(readOnlyVolume.resolve("data.txt")).hasContent("kept");
        kubectl.run("delete", "alloc", "volume", "--timeout=30s").assertOk();
    }

    @Test
    void aTaskReservingOneFakeGpuSeesThatDeviceNodeAlone() throws IOException {
        String config = ("{image: \"%s\", args: [\"ls /dev | grep fake-; env | grep ^FAKE_GPU_ | cut -d= -f2\"]}")
                .formatted(image);
        kubectl.runWithInput(oci("gpu", BATCH, config, "{devices: [{name: nvidia/gpu, count: 1}]}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("gpu", "Complete", TIMEOUT);

        String reserved = kubectl.allocJsonpath("gpu", ".status.allocatedDevices[*].ids[*]");
        List<String> lines = Files.readAllLines(data.resolve("allocs/default/gpu/alloc/logs/main.stdout.0"));
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).as("one device node, of the GPU reserved").matches("fake-gpu[01]");
        assertThat(lines.get(1)).isEqualTo(reserved);
        kubectl.run("delete", "alloc", "gpu", "--timeout=30s").assertOk();
    }

    @Test
    void rootInTheContainerHasTheDefaultCapabilitiesAndCannotUnshareOrMount() throws IOException {
        String config = ("{image: \"%s\", args: [\"grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status;"
                        + " unshare -m true || echo unshare refused; mount -t tmpfs x /mnt || echo mount refused\"]}")
                .formatted(image);
        kubectl.runWithInput(oci("attack", BATCH, config, "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("attack", "Complete", TIMEOUT);

        assertThat(Files.readString(data.resolve("allocs/default/attack/alloc/logs/main.stdout.0")))
                .as("the runtime default set (as a kubelet's), no new privileges, a seccomp filter")
                .isEqualTo("CapEff:\t00000000a80425fb\nNoNewPrivs:\t1\nSeccomp:\t2\n"
                        + "unshare refused\nmount refused\n");
        kubectl.run("delete", "alloc", "attack", "--timeout=30s").assertOk();
    }

    @Test
    void aHostileImageIsRefusedNamingItsEntryAndWritesNothingOutsideTheStore() throws Exception {
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("canary"), "untouched");
        registry.push(
                "hostile/link-out",
                "1",
                TestImage.of(
                        Map.of(),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP).symlink("escape", outside.toString()),
                        new TestImage.Layer(TestImage.Compression.GZIP).file("escape/canary", "overwritten", 0644)));
        registry.push(
                "hostile/huge",
                "1",
                TestImage.of(Map.of(), false, TestImage.Layer.claiming("big", 10L * 1024 * 1024 * 1024)));

        for (String name : List.of("link-out", "huge")) {
            String config = "{image: \"%s/hostile/%s:1\", command: /bin/true}".formatted(registry.host(), name);
            kubectl.runWithInput(oci(name, BATCH, config, "{}"), "apply", "-f", "-")
                    .assertOk();
        }
        for (String name : List.of("link-out", "huge")) {
            kubectl.waitForClientStatus(name, "Failed", TIMEOUT);
            assertThat(kubectl.allocJsonpath(name, ".status.taskStates.main.events[?(@.type==\"PullFailed\")].message"))
                    .as(name)
                    .contains("entry \"");
        }
        assertThat(outside.resolve("canary")).hasContent("untouched");
        try (Stream<Path> files = Files.list(outside)) {
            assertThat(files.toList()).containsExactly(outside.resolve("canary"));
        }
        kubectl.run("delete", "alloc", "link-out", "huge", "--timeout=30s").assertOk();
    }

    @Test
    void anImageWhoseBlobsWereTamperedWithOnTheWayIsRefused() throws Exception {
        // an image the node has not had from elsewhere: content it already holds, verified, is not fetched again
        registry.push(
                "apps/tampered",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh", "-c")),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP)
                                .busybox()
                                .file("etc/motd", "only through the proxy\n", 0644)));
        String config =
                "{image: \"%s/apps/tampered:1\", pullPolicy: Always, args: [\"echo ran\"]}".formatted(tampering.host());
        kubectl.runWithInput(oci("tampered", BATCH, config, "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("tampered", "Failed", TIMEOUT);

        assertThat(kubectl.allocJsonpath(
                        "tampered", ".status.taskStates.main.events[?(@.type==\"PullFailed\")].message"))
                .contains("does not have that digest");
        assertThat(tampering.tampered()).isPositive();
        assertThat(kubectl.allocJsonpath("tampered", ".status.taskStates.main.events[*].type"))
                .doesNotContain("Started");
        kubectl.run("delete", "alloc", "tampered", "--timeout=30s").assertOk();
    }

    /**
     * A container service, as examples/image-service.yaml: busybox's httpd behind an http check that makes the
     * allocation Ready; {@code kubectl drover signal} reaches the container's process and {@code kubectl drover
     * restart} starts it again from the image.
     */
    @Test
    void aContainerServiceIsReadyByItsHttpCheckAndSignalAndRestartReachIt() throws Exception {
        int port = AgentIT.freePort();
        String script = ("trap 'echo saw USR1' USR1; echo up; echo hello > /local/index.html;"
                        + " httpd -p %d -h /local; while true; do sleep 1; done")
                .formatted(port);
        String yaml =
                oci("web", "", "{image: \"%s\", args: [\"%s\"]}".formatted(image, script), "{}") + """
                    checks:
                    - {name: http, type: http, port: %d, path: /index.html, interval: 1s, timeout: 1s}
                """.formatted(port);
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
        kubectl.run(
                        "wait",
                        "alloc/web",
                        "--for=jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True",
                        "--timeout=" + TIMEOUT.toSeconds() + "s")
                .assertOk();
        Path stdout = data.resolve("allocs/default/web/alloc/logs/main.stdout.0");

        var signal = kubectl.plugin(AgentIT.PLUGINS, "drover", "signal", "web", "main", "SIGUSR1");
        assertThat(signal.exitCode()).as(signal.err()).isZero();
        await().atMost(TIMEOUT).until(() -> Files.readString(stdout).contains("saw USR1"));

        var restart = kubectl.plugin(AgentIT.PLUGINS, "drover", "restart", "web", "main");
        assertThat(restart.exitCode()).as(restart.err()).isZero();
        await().atMost(TIMEOUT)
                .until(() ->
                        Files.readString(stdout).lines().filter("up"::equals).count() == 2);
        kubectl.run(
                        "wait",
                        "alloc/web",
                        "--for=jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True",
                        "--timeout=" + TIMEOUT.toSeconds() + "s")
                .assertOk();
        kubectl.run("delete", "alloc", "web", "--timeout=30s").assertOk();
    }

    /**
     * The container survives its agent's SIGKILL and is supervised again by the next agent, not restarted;
     * {@code kubectl drover exec} runs inside it (its root, its PID namespace); deleting the allocation leaves no
     * process, mount, cgroup or runtime state behind.
     */
    @Test
    void aKilledAgentReattachesExecReachesInsideAndDeleteLeavesNothing() throws Exception {
        String config = "{image: \"%s\", args: [\"echo up; exec sleep 600\"]}".formatted(image);
        kubectl.runWithInput(oci("kept", "", config, "{memoryMB: 64}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("kept", "Running", TIMEOUT);
        Path task = data.resolve("allocs/default/kept/main");
        await().atMost(TIMEOUT).until(() -> containerInit(task) > 0);
        long init = containerInit(task);

        agent.kill();
        assertThat(ProcessHandle.of(init))
                .as("the container outlives its agent")
                .isPresent();
        agent.start();

        await().atMost(TIMEOUT).untilAsserted(() -> {
            var exec = kubectl.plugin(
                    AgentIT.PLUGINS,
                    "drover",
                    "exec",
                    "kept",
                    "main",
                    "--",
                    "sh",
                    "-c",
                    "cat /etc/motd; cat /proc/1/cmdline | tr '\\0' ' '");
            assertThat(exec.exitCode()).as(exec.err()).isZero();
            assertThat(exec.out()).isEqualTo("from the image\nsleep 600 ");
        });
        assertThat(containerInit(task)).as("the same container").isEqualTo(init);
        assertThat(kubectl.allocJsonpath("kept", ".status.taskStates.main.restarts"))
                .isIn("", "0");
        assertThat(Files.readString(data.resolve("allocs/default/kept/alloc/logs/main.stdout.0")))
                .as("started once")
                .isEqualTo("up\n");

        kubectl.run("delete", "alloc", "kept", "--timeout=60s").assertOk();

        await().atMost(TIMEOUT).until(() -> ProcessHandle.of(init).isEmpty());
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain(data.toString());
        assertThat(Cgroups.detect().find(CgroupParent.own().child(cgroupParent), "default_kept_main"))
                .as("its cgroup removed")
                .isEmpty();
        try (Stream<Path> left = Files.exists(task) ? Files.walk(task) : Stream.empty()) {
            assertThat(left.filter(p -> p.toString().contains(".drover-oci")).toList())
                    .as("no runtime state")
                    .isEmpty();
        }
    }

    /** The host PID of the container's first process, as its runtime's state names it; 0 before it runs. */
    private static long containerInit(Path task) throws IOException {
        Path runtime = task.resolve(".drover-oci/runtime");
        if (!Files.isDirectory(runtime)) {
            return 0;
        }
        try (Stream<Path> states = Files.list(runtime)) {
            for (Path container : states.toList()) {
                Path state = container.resolve("state.json");
                if (Files.exists(state)) {
                    Matcher m = Pattern.compile("\"init_process_pid\":(\\d+)").matcher(Files.readString(state));
                    if (m.find()) {
                        return Long.parseLong(m.group(1));
                    }
                }
            }
        }
        return 0;
    }
}
