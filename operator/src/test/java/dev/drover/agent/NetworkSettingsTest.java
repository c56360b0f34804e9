package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.admission.NodePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The network settings as docs/configuration.md and the chart give them: file, environment and flags. */
class NetworkSettingsTest {

    @TempDir
    Path dir;

    @Test
    void defaultsAreTheReferencePluginsDirTheDynamicRangeAndDroversOwnBridge() throws Exception {
        NetworkSettings n =
                AgentConfig.load(List.of(), Map.of("NODE_NAME", "n")).networks();
        assertThat(n)
                .isEqualTo(new NetworkSettings(
                        Path.of("/opt/cni/bin"),
                        new NodePorts.Range(20000, 32000),
                        "drover0",
                        "172.26.64.0/20",
                        Optional.empty()));
    }

    @Test
    void theChartsConfigFileWithEveryNetworkKeyIsTaken() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                cniBinDir: /usr/lib/cni
                dynamicPorts: 30000-30999
                bridge:
                  name: apps0
                  subnet: 10.250.0.0/24
                nodeAddress: 192.0.2.7
                """);
        NetworkSettings n = AgentConfig.load(List.of("--config", file.toString()), Map.of("NODE_NAME", "n"))
                .networks();
        assertThat(n)
                .isEqualTo(new NetworkSettings(
                        Path.of("/usr/lib/cni"),
                        new NodePorts.Range(30000, 30999),
                        "apps0",
                        "10.250.0.0/24",
                        Optional.of("192.0.2.7")));
    }

    @Test
    void theEnvironmentTheDaemonSetSetsBeatsTheFile() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "dynamicPorts: 30000-30999\nnodeAddress: 192.0.2.7\n");
        NetworkSettings n = AgentConfig.load(
                        List.of("--config", file.toString()),
                        Map.of(
                                "NODE_NAME", "n",
                                "DROVER_NODE_ADDRESS", "198.51.100.3",
                                "DROVER_DYNAMIC_PORTS", "40000-40099",
                                "DROVER_CNI_BIN_DIR", "/opt/cni/bin"))
                .networks();
        assertThat(n.nodeAddress()).contains("198.51.100.3");
        assertThat(n.dynamicPorts()).isEqualTo(new NodePorts.Range(40000, 40099));
    }

    @Test
    void anUnknownKeyUnderBridgeIsRefusedByName() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "bridge: {name: apps0, mtu: 1400}\n");
        assertThatThrownBy(() -> AgentConfig.load(List.of("--config", file.toString()), Map.of("NODE_NAME", "n")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("unknown setting(s) [bridge.mtu]");
    }
}
