package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Allocations' networks, ports and Services on the local cluster, with the real CNI plugins (Debian's
 * {@code containernetworking-plugins}, in {@code /usr/lib/cni}) and iptables, run by the agent for real. Failsafe runs
 * this class's JVM in a network and mount namespace of its own ({@code src/test/netns/bin/java}): the local API server,
 * the agent, kubectl and the test's own clients meet on its loopback, and every bridge, veth and rule is made there,
 * never on the machine's own network. Tasks are exec tasks serving with the host's busybox.
 */
class NetworkIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Path CNI = Path.of("/usr/lib/cni");
    private static final String BUSYBOX = "/bin/busybox";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static String cgroupParent;
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    @BeforeAll
    static void start() throws Exception {
        // -Dit.test=NetworkIT selects it in every failsafe execution: only the one that gives it a network of its own
        // runs it, and that one must really have (the machine's own network is never touched)
        Assumptions.assumeTrue(
                Boolean.getBoolean("drover.ownNetwork"),
                "NetworkIT runs in failsafe's network execution only, in a network namespace of its own");
        long maven = ProcessHandle.current().parent().orElseThrow().pid();
        assertThat(Files.readSymbolicLink(Path.of("/proc/self/ns/net")))
                .as("this JVM's network namespace is not Maven's (src/test/netns/bin/java made one)")
                .isNotEqualTo(Files.readSymbolicLink(Path.of("/proc", Long.toString(maven), "ns", "net")));
        for (String plugin : List.of("bridge", "host-local", "portmap", "loopback")) {
            assertThat(CNI.resolve(plugin))
                    .as("the CNI plugin " + plugin + " is missing: install Debian's containernetworking-plugins"
                            + " (.ci/tools does)")
                    .isExecutable();
        }
        assertThat(Stream.of("/usr/sbin/iptables", "/sbin/iptables")
                        .map(Path::of)
                        .anyMatch(Files::isExecutable))
                .as("iptables is missing: install Debian's iptables (.ci/tools does)")
                .isTrue();
        assertThat(Path.of(BUSYBOX)).as("install Debian's busybox-static").isExecutable();
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        // not below /tmp (a clone there puts target/ in it): each exec task has a /tmp of its own
        data = Files.createTempDirectory(ExecIT.dataBase(), "network-it");
        cgroupParent = TestCgroups.newName();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("network-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        data.toString(),
                        "--enable-exec",
                        "--cni-bin-dir",
                        CNI.toString(),
                        "--dynamic-ports",
                        "20000-20019",
                        "--cgroup-parent",
                        cgroupParent,
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "-1")
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (cgroupParent != null) {
            TestCgroups.remove(cgroupParent);
        }
        if (server != null) {
            server.close();
        }
    }

    /** An allocation of one exec task running {@code script} with the host's busybox, in {@code network}. */
    static String exec(String name, String network, String script, String extra) {
        return exec(name, network, script, extra, "");
    }

    /** As above, with {@code taskExtra} (lines of YAML at the task's indentation, e.g. its checks). */
    static String exec(String name, String network, String script, String extra, String taskExtra) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  network: %s
                %s  tasks:
                  - name: main
                    driver: exec
                    killTimeout: 1s
                    config: {command: /bin/sh, args: ["-c", %s]}
                %s""".formatted(name, network, extra, quoted(script), taskExtra);
    }

    /** A server of {@code text} on {@code $DROVER_PORT_HTTP}, its health at {@code /health} while that file is. */
    static String httpd(String text) {
        return "mkdir -p local/www && echo \"" + text + " $DROVER_PORT_HTTP $DROVER_HOST_PORT_HTTP $DROVER_ADDR_HTTP\""
                + " > local/www/index.html && echo ok > local/www/health && exec " + BUSYBOX
                + " httpd -f -p $DROVER_PORT_HTTP -h local/www";
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    static void delete(String... names) {
        for (String name : names) {
            kubectl.run("delete", "alloc", name, "--wait=true", "--timeout=60s").assertOk();
        }
    }

    static int hostPort(String alloc, String port) {
        await().atMost(TIMEOUT)
                .until(() -> !kubectl.allocJsonpath(
                                alloc, ".status.network.ports[?(@.name==\"" + port + "\")].hostPort")
                        .isEmpty());
        return Integer.parseInt(
                kubectl.allocJsonpath(alloc, ".status.network.ports[?(@.name==\"" + port + "\")].hostPort"));
    }

    static String get(int port, String path) {
        try {
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                            .timeout(Duration.ofSeconds(3))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() + " " + r.body().strip();
        } catch (IOException e) {
            return "unreachable: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    @Test
    void twoBridgeAllocationsOnOnePortInsideAreEachReachedThroughTheirOwnHostPort() throws Exception {
        String ports = "{mode: bridge, ports: [{name: http, to: 8080}]}";
        apply(exec("web-a", ports, httpd("alpha"), ""));
        apply(exec("web-b", ports, httpd("beta"), ""));
        kubectl.waitForClientStatus("web-a", "Running", TIMEOUT);
        kubectl.waitForClientStatus("web-b", "Running", TIMEOUT);
        int a = hostPort("web-a", "http");
        int b = hostPort("web-b", "http");

        assertThat(a).isNotEqualTo(b).isBetween(20000, 20019);
        assertThat(b).isBetween(20000, 20019);
        await().atMost(TIMEOUT).until(() -> get(a, "/").startsWith("200"));
        await().atMost(TIMEOUT).until(() -> get(b, "/").startsWith("200"));
        assertThat(get(a, "/")).isEqualTo("200 alpha 8080 " + a + " 127.0.0.1:" + a);
        assertThat(get(b, "/")).isEqualTo("200 beta 8080 " + b + " 127.0.0.1:" + b);
        String ipA = kubectl.allocJsonpath("web-a", ".status.network.ip");
        String ipB = kubectl.allocJsonpath("web-b", ".status.network.ip");
        assertThat(ipA).startsWith("172.26.").isNotEqualTo(ipB);
        assertThat(kubectl.allocJsonpath("web-a", ".status.network.mode")).isEqualTo("bridge");
        assertThat(kubectl.run("get", "alloc", "web-a", "-o", "wide").assertOk().out())
                .as("-o wide shows the address")
                .contains(ipA);

        delete("web-a", "web-b");
    }

    @Test
    void aNoneNetworkHasOnlyLoopback() {
        apply(exec(
                "isolated",
                "{mode: none}",
                "test \"$(grep -c : /proc/net/dev)\" = 1 && grep -q 'lo:' /proc/net/dev",
                "  type: Batch\n  restartPolicy: {attempts: 0, interval: 1m, delay: 1s, mode: Fail}\n"));
        kubectl.waitForClientStatus("isolated", "Complete", TIMEOUT);
        assertThat(kubectl.allocJsonpath("isolated", ".status.network.mode")).isEqualTo("none");
        delete("isolated");
    }

    @Test
    void aStaticPortHeldByAnotherAllocationIsRefusedWithPortConflict() {
        String fixed = "{ports: [{name: admin, static: 18080}]}";
        apply(exec("holder", fixed, "exec sleep 600", ""));
        kubectl.waitForClientStatus("holder", "Running", TIMEOUT);
        apply(exec("clash", fixed, "exec sleep 600", ""));
        kubectl.waitForClientStatus("clash", "Failed", TIMEOUT);

        assertThat(kubectl.allocJsonpath("clash", ".status.conditions[?(@.type==\"Admitted\")].reason"))
                .isEqualTo("PortConflict");
        assertThat(kubectl.allocJsonpath("clash", ".status.conditions[?(@.type==\"Admitted\")].message"))
                .contains("port 18080")
                .contains("default/holder");
        delete("holder", "clash");
    }

    @Test
    void aDynamicPortFreedByADeleteIsTheNodesAgain() {
        apply(exec("first", "{mode: bridge, ports: [{name: http}]}", "exec sleep 600", ""));
        kubectl.waitForClientStatus("first", "Running", TIMEOUT);
        int port = hostPort("first", "http");
        apply(exec("blocked", "{ports: [{name: http, static: " + port + "}]}", "exec sleep 600", ""));
        kubectl.waitForClientStatus("blocked", "Failed", TIMEOUT);
        delete("first", "blocked");

        apply(exec("second", "{ports: [{name: http, static: " + port + "}]}", "exec sleep 600", ""));
        kubectl.waitForClientStatus("second", "Running", TIMEOUT);
        assertThat(hostPort("second", "http")).isEqualTo(port);
        delete("second");
    }

    @Test
    void anAgentRestartKeepsTheNetworkItsPortsAndAClientsConnection() throws Exception {
        apply(exec(
                "echo",
                "{mode: bridge, ports: [{name: echo, to: 7000}]}",
                "exec " + BUSYBOX + " nc -ll -p $DROVER_PORT_ECHO -e /bin/cat",
                ""));
        kubectl.waitForClientStatus("echo", "Running", TIMEOUT);
        int port = hostPort("echo", "echo");
        String ip = kubectl.allocJsonpath("echo", ".status.network.ip");
        await().atMost(TIMEOUT).until(() -> {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return true;
            } catch (IOException e) {
                return false;
            }
        });
        try (Socket client = new Socket()) {
            client.connect(new InetSocketAddress("127.0.0.1", port), 3000);
            client.setSoTimeout(5000);
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
            OutputStream out = client.getOutputStream();
            out.write("before\n".getBytes(StandardCharsets.UTF_8));
            assertThat(in.readLine()).isEqualTo("before");

            agent.kill();
            agent.start();

            out.write("after\n".getBytes(StandardCharsets.UTF_8));
            assertThat(in.readLine()).as("the connection outlives the agent").isEqualTo("after");
        }
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(agent.log()).contains("is ready"));
        assertThat(kubectl.allocJsonpath("echo", ".status.taskStates.main.restarts"))
                .isEqualTo("0");
        assertThat(hostPort("echo", "echo")).isEqualTo(port);
        assertThat(kubectl.allocJsonpath("echo", ".status.network.ip")).isEqualTo(ip);
        delete("echo");
    }

    @Test
    void deletedAllocationsLeaveNoNamespaceVethRuleOrLease() throws Exception {
        apply(exec("gone", "{mode: bridge, ports: [{name: http, to: 8080}]}", httpd("gone"), ""));
        kubectl.waitForClientStatus("gone", "Running", TIMEOUT);
        int port = hostPort("gone", "http");
        await().atMost(TIMEOUT).until(() -> get(port, "/").startsWith("200"));
        assertThat(run("iptables-save", "-t", "nat")).contains("--dport " + port);
        delete("gone");

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(run("ip", "-o", "link", "show", "type", "veth")).isBlank();
            assertThat(run("iptables-save", "-t", "nat")).doesNotContain("--dport " + port);
            try (Stream<Path> left = Files.list(data.resolve("netns"))) {
                assertThat(left).isEmpty();
            }
            Path leases = data.resolve("cni/networks");
            try (Stream<Path> files = Files.exists(leases) ? Files.walk(leases) : Stream.empty()) {
                assertThat(files.filter(Files::isRegularFile)
                                .map(p -> p.getFileName().toString())
                                .filter(n -> n.matches("[0-9.]+")))
                        .as("no address is leased")
                        .isEmpty();
            }
        });
    }

    /** The {@code field} of each endpoint of Service {@code service}'s slices, by host port, sorted. */
    static String endpoints(String service, String jsonpath) {
        return kubectl.run(
                        "get",
                        "endpointslices",
                        "-l",
                        "kubernetes.io/service-name=" + service,
                        "-o",
                        "jsonpath={range .items[*]}{.ports[0].port}=" + jsonpath + "{\"\\n\"}{end}")
                .assertOk()
                .out()
                .lines()
                .sorted()
                .reduce((x, y) -> x + " " + y)
                .orElse("");
    }

    @Test
    void aServiceReachesItsAllocationsThroughSlicesThatFollowTheirReadiness() throws Exception {
        // the chart's policy lets agents write slices only in namespaces that opt in (docs/networking.md)
        kubectl.run("label", "namespace", "default", "drover.dev/workloads=enabled", "--overwrite")
                .assertOk();
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: default}
                spec:
                  ports: [{name: http, port: 80, targetPort: http}]
                """, "apply", "-f", "-").assertOk();
        String extra = "  services: [{name: web, port: http}]\n";
        String checked = "{mode: bridge, ports: [{name: http, to: 8080}]}";
        for (String name : List.of("svc-a", "svc-b")) {
            apply(exec(
                    name,
                    checked,
                    httpd(name),
                    extra,
                    "    checks: [{name: up, type: http, port: http, path: /health, interval: 1s, timeout: 1s}]\n"));
        }
        int a = hostPort("svc-a", "http");
        int b = hostPort("svc-b", "http");
        await().atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(endpoints("web", "{.endpoints[0].conditions.ready}"))
                        .isEqualTo(a < b ? a + "=true " + b + "=true" : b + "=true " + a + "=true"));
        assertThat(endpoints("web", "{.endpoints[0].addresses[0]}/{.endpoints[0].nodeName}/{.addressType}"))
                .contains(a + "=127.0.0.1/local/IPv4");
        assertThat(endpoints("web", "{.metadata.labels.endpointslice\\.kubernetes\\.io/managed-by}"))
                .contains(a + "=agent.drover.dev");

        Path health = data.resolve("allocs/default/svc-a/main/local/www/health");
        Files.delete(health);
        await().atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(endpoints("web", "{.endpoints[0].conditions.ready}"))
                        .as("svc-a's check fails: not ready")
                        .contains(a + "=false")
                        .contains(b + "=true"));
        Files.writeString(health, "ok\n");
        await().atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(endpoints("web", "{.endpoints[0].conditions.ready}"))
                        .as("and ready again once it passes")
                        .contains(a + "=true"));

        delete("svc-b");
        await().atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(endpoints("web", "{.endpoints[0].conditions.ready}"))
                        .isEqualTo(a + "=true"));
        delete("svc-a");
        kubectl.run("delete", "service", "web").assertOk();
    }
}
