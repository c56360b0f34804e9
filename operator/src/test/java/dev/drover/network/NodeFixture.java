package dev.drover.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A "node" for the network tests: a network namespace the test made (its loopback up), where the plugins run (through
 * {@code nsenter}) and so where the bridge, the veths' host ends and the iptables rules are; an {@link AllocNetworks}
 * over a data dir of the test's; the servers the test started. {@link #close} stops the servers, tears down every
 * network it set up, removes the node and checks that no mount is left under the test's directory.
 */
final class NodeFixture implements AutoCloseable {

    final Path tmp;
    final NetNs nodes;
    final Path node;
    final Path dataDir;
    final AllocNetworks networks;
    private final List<AttachedNetwork> made = new ArrayList<>();
    private final List<Process> servers = new ArrayList<>();

    NodeFixture(Path tmp, BridgeSettings settings) throws Exception {
        this.tmp = tmp;
        Path bin = Nodes.cniBinDir();
        this.nodes = NetNs.in(tmp.resolve("nodes"));
        this.node = nodes.create("node");
        Nodes.run(node, "ip", "link", "set", "lo", "up");
        this.dataDir = tmp.resolve("data");
        CniPlugins plugins = new CniPlugins(
                bin, PluginLauncher.prefixed(List.of("nsenter", "--net=" + node, "--")), Duration.ofSeconds(60));
        this.networks = new AllocNetworks(dataDir, plugins, settings);
    }

    AttachedNetwork setUp(String allocId, NetworkMode mode, PortMapping... ports) throws IOException {
        AttachedNetwork a = networks.setUp(allocId, mode, List.of(ports));
        made.add(a);
        return a;
    }

    /** {@code busybox httpd} on port 8080 in {@code a}'s namespace, serving {@code text}; answering once this returns. */
    void serve(AttachedNetwork a, String text) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("www-" + a.containerId()));
        Files.writeString(root.resolve("index.html"), text);
        Process p = new ProcessBuilder(
                        "nsenter",
                        "--net=" + a.netns(),
                        "--",
                        "busybox",
                        "httpd",
                        "-f",
                        "-p",
                        "8080",
                        "-h",
                        root.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        servers.add(p);
        for (int i = 0; i < 200; i++) { // until it listens: its own namespace's loopback answers
            if (Nodes.runQuietly(Path.of(a.netns()), "curl", "-s", "-o", "/dev/null", "http://127.0.0.1:8080/")
                            .exit()
                    == 0) {
                return;
            }
            assertThat(p.isAlive()).as("httpd in " + a.containerId()).isTrue();
            Thread.onSpinWait();
        }
        throw new AssertionError("httpd in " + a.containerId() + " never answered");
    }

    /** What {@code url} answers from the node's namespace. */
    String curl(String url) throws Exception {
        return Nodes.run(node, "curl", "-s", "--max-time", "5", url);
    }

    String inNode(String... argv) throws Exception {
        return Nodes.run(node, argv);
    }

    /** The lease files host-local holds (not its lock and last-reserved bookkeeping). */
    List<String> leases() throws IOException {
        Path dir = dataDir.resolve("cni/networks/" + NetworkConfigs.NETWORK);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip"))
                    .sorted()
                    .toList();
        }
    }

    @Override
    public void close() throws Exception {
        for (Process p : servers) {
            p.destroyForcibly().waitFor();
        }
        List<String> problems = new ArrayList<>();
        for (AttachedNetwork a : made) {
            problems.addAll(networks.tearDown(a));
        }
        nodes.remove(node);
        assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                .as("mounts left under the test's directory")
                .doesNotContain(tmp.toString());
        assertThat(problems).as("teardown problems").isEmpty();
    }
}
