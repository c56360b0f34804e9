package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.cli.flags.FlagParser;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code drover-local up} in this process: where the agent it starts listens. */
class LocalUpTest {

    @TempDir
    Path dir;

    @Test
    void upServesTheAgentsMetricsAndApiOnLoopbackOnly() throws Exception {
        LocalUp.Settings settings = LocalMain.upSettings(FlagParser.parse(
                LocalCommandLine.flags(LocalCommandLine.command("up")),
                List.of(
                        "--kubeconfig",
                        dir.resolve("kubeconfig").toString(),
                        "--data-dir",
                        dir.resolve("data").toString()),
                false));
        String cgroupParent = "drover-test-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> agentArgs = new ArrayList<>(LocalUp.agentArgs(settings));
        agentArgs.addAll(List.of("--cgroup-parent", cgroupParent)); // its own, not a shared "drover"
        try (LocalUp up = LocalUp.start(settings, agentArgs)) {
            for (int port : new int[] {up.agent().metricsPort(), up.agent().apiPort()}) {
                assertThat(listeners(port))
                        .as("the sockets listening on port %d", port)
                        .isNotEmpty()
                        .allSatisfy(a -> assertThat(a.getHostAddress()).isEqualTo("127.0.0.1"));
            }
        } finally {
            try { // the agent removes its unused parent itself at stop; this is for a failed start
                Cgroups.detect().removeWithIdleChildren(CgroupParent.own(), cgroupParent, Duration.ofSeconds(10));
            } catch (IOException e) {
                System.err.println("LocalUpTest: cgroup " + cgroupParent + " left behind: " + e.getMessage());
            }
        }
    }

    @Test
    void onKubernetes135TheAgentRunsInItsPodAndBooksItsReservationThere() throws Exception {
        LocalUp.Settings settings = LocalMain.upSettings(FlagParser.parse(
                LocalCommandLine.flags(LocalCommandLine.command("up")),
                List.of(
                        "--kubeconfig",
                        dir.resolve("kubeconfig").toString(),
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--kube-version",
                        "1.35",
                        "--node-allocatable",
                        "cpu=2,memory=4Gi"),
                false));
        String cgroupParent = "drover-test-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> agentArgs = new ArrayList<>(LocalUp.agentArgs(settings));
        agentArgs.addAll(List.of("--cgroup-parent", cgroupParent));
        try (LocalUp up = LocalUp.start(settings, agentArgs)) {
            var pods = up.server()
                    .client()
                    .pods()
                    .inNamespace(AgentIdentity.NAMESPACE)
                    .list()
                    .getItems();
            assertThat(pods).singleElement().satisfies(p -> {
                assertThat(p.getSpec().getNodeName()).isEqualTo(LocalMain.LOCAL_NODE);
                assertThat(p.getStatus().getPhase()).isEqualTo("Running");
                assertThat(p.getSpec().getContainers())
                        .anySatisfy(c -> assertThat(c.getName()).isEqualTo("reservation"));
            });
            assertThat(up.server()
                            .client()
                            .nodes()
                            .withName(LocalMain.LOCAL_NODE)
                            .get()
                            .getStatus()
                            .getAllocatable())
                    .containsEntry("cpu", new io.fabric8.kubernetes.api.model.Quantity("2"));
        } finally {
            try {
                Cgroups.detect().removeWithIdleChildren(CgroupParent.own(), cgroupParent, Duration.ofSeconds(10));
            } catch (IOException e) {
                System.err.println("LocalUpTest: cgroup " + cgroupParent + " left behind: " + e.getMessage());
            }
        }
    }

    @Test
    void enableOciGivesTheAgentTheOciDriverAndNothingElseDoes() throws Exception {
        List<String> flags = List.of("--kubeconfig", dir.resolve("kubeconfig").toString());
        List<String> plain = LocalUp.agentArgs(LocalMain.upSettings(
                FlagParser.parse(LocalCommandLine.flags(LocalCommandLine.command("up")), flags, false)));
        List<String> withOci = new ArrayList<>(flags);
        withOci.add("--enable-oci");
        List<String> oci = LocalUp.agentArgs(LocalMain.upSettings(
                FlagParser.parse(LocalCommandLine.flags(LocalCommandLine.command("up")), withOci, false)));

        assertThat(plain).doesNotContain("--enable-oci");
        assertThat(oci).contains("--enable-oci", "--enable-raw-exec");
    }

    @Test
    void cniBinDirReachesTheAgentAsAnAbsolutePath() throws Exception {
        List<String> flags = List.of("--kubeconfig", dir.resolve("kubeconfig").toString(), "--cni-bin-dir", "cni");
        List<String> args = LocalUp.agentArgs(LocalMain.upSettings(
                FlagParser.parse(LocalCommandLine.flags(LocalCommandLine.command("up")), flags, false)));

        assertThat(args)
                .containsSequence(
                        "--cni-bin-dir", Path.of("cni").toAbsolutePath().toString());
    }

    /** The local addresses of the TCP sockets listening on {@code port}, as the kernel lists them. */
    static List<InetAddress> listeners(int port) throws IOException {
        List<InetAddress> found = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path file = Path.of(table);
            if (!Files.exists(file)) {
                continue;
            }
            List<String> lines = Files.readAllLines(file);
            for (String line : lines.subList(1, lines.size())) { // the first names the columns
                String[] f = line.trim().split("\\s+");
                String[] local = f[1].split(":");
                if (f[3].equals("0A") && Integer.parseInt(local[1], 16) == port) { // 0A: LISTEN
                    found.add(address(local[0]));
                }
            }
        }
        return found;
    }

    /** The kernel writes an address as 32-bit words, each in the machine's (little-endian) order. */
    private static InetAddress address(String hex) throws IOException {
        byte[] words = HexFormat.of().parseHex(hex);
        byte[] bytes = new byte[words.length];
        for (int i = 0; i < words.length; i += 4) {
            for (int j = 0; j < 4; j++) {
                bytes[i + j] = words[i + 3 - j];
            }
        }
        return InetAddress.getByAddress(bytes);
    }
}
