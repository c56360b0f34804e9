package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.httpapi.ApiLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentConfigTest {

    @TempDir
    Path dir;

    static AgentConfig load(Map<String, String> env, String... args) throws Exception {
        return AgentConfig.load(List.of(args), env);
    }

    @Test
    void defaultsNeedOnlyANodeName() throws Exception {
        AgentConfig c = load(Map.of("NODE_NAME", "node-1"));
        assertThat(c.nodeName()).isEqualTo("node-1");
        assertThat(c.dataDir()).isEqualTo(Path.of("/var/lib/drover"));
        assertThat(c.enableRawExec()).as("raw_exec is off unless enabled").isFalse();
        assertThat(c.metricsPort()).isEqualTo(9090);
        assertThat(c.apiPort()).isEqualTo(4646);
        assertThat(c.kubeconfig()).isEmpty();
        assertThat(c.maxKillTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.gc().maxAllocations()).isEqualTo(50);
        assertThat(c.statusWrites().batchDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.events())
                .as("the kubelet's --event-qps and --event-burst")
                .isEqualTo(new dev.drover.controller.EventRate(50, 100));
        assertThat(c.concurrentStarts()).isEqualTo(32);
        assertThat(c.peerTokenFile()).isEqualTo(Path.of("/var/run/secrets/drover.dev/peer/token"));
    }

    @Test
    void thePeerTokenFileComesFromFlagEnvironmentOrFile() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "peerTokenFile: /from/file\n");
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).peerTokenFile())
                .isEqualTo(Path.of("/from/file"));
        assertThat(load(Map.of("NODE_NAME", "n", "DROVER_PEER_TOKEN_FILE", "/from/env"), "--config", file.toString())
                        .peerTokenFile())
                .isEqualTo(Path.of("/from/env"));
        assertThat(load(Map.of("NODE_NAME", "n", "DROVER_PEER_TOKEN_FILE", "/from/env"), "--peer-token-file=/from/flag")
                        .peerTokenFile())
                .isEqualTo(Path.of("/from/flag"));
    }

    @Test
    void theGatewayIsNoneUnlessNamedAndItsCaComesFromFlagEnvironmentOrFile() throws Exception {
        AgentConfig plain = load(Map.of("NODE_NAME", "n"));
        assertThat(plain.gatewayUser())
                .as("the plain manifests install no gateway")
                .isEmpty();
        assertThat(plain.gatewayCaFile()).isEqualTo(Path.of("/etc/drover-gateway-ca/ca.crt"));
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "gatewayCaFile: /from/file\ngatewayUser: system:serviceaccount:ns:from-file\n");
        AgentConfig fromFile = load(Map.of("NODE_NAME", "n"), "--config", file.toString());
        assertThat(fromFile.gatewayCaFile()).isEqualTo(Path.of("/from/file"));
        assertThat(fromFile.gatewayUser()).contains("system:serviceaccount:ns:from-file");
        AgentConfig fromEnv = load(
                Map.of("NODE_NAME", "n", "DROVER_GATEWAY_USER", "system:serviceaccount:drover-system:drover-gateway"),
                "--config",
                file.toString(),
                "--gateway-ca-file=/from/flag");
        assertThat(fromEnv.gatewayUser()).contains("system:serviceaccount:drover-system:drover-gateway");
        assertThat(fromEnv.gatewayCaFile()).isEqualTo(Path.of("/from/flag"));
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--gateway-user", "alice"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("gatewayUser \"alice\" is not a ServiceAccount's username");
    }

    @Test
    void flagsBeatEnvironmentWhichBeatsTheFile() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                logLevel: debug
                maxKillTimeout: 45s
                metricsPort: 7000
                dataDir: /from/file
                gc: {interval: 2m, maxAllocations: 10}
                statusWrites: {batchDelay: 500ms, resync: 20s}
                events: {qps: 5.5, burst: 20}
                """);
        AgentConfig c = load(
                Map.of(
                        "NODE_NAME",
                        "env-node",
                        "DROVER_METRICS_PORT",
                        "8000",
                        "DROVER_ENABLE_RAW_EXEC",
                        "true",
                        "DROVER_RAW_EXEC_LAUNCHER",
                        "nsenter -t 1 --  systemd-run"),
                "--config",
                file.toString(),
                "--node",
                "flag-node");
        assertThat(c.nodeName()).isEqualTo("flag-node");
        assertThat(c.metricsPort()).isEqualTo(8000);
        assertThat(c.dataDir()).isEqualTo(Path.of("/from/file"));
        assertThat(c.logLevel()).isEqualTo("debug");
        assertThat(c.maxKillTimeout()).isEqualTo(Duration.ofSeconds(45));
        assertThat(c.gc().interval()).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.gc().maxAllocations()).isEqualTo(10);
        assertThat(c.gc().parallelDestroys())
                .as("a key left out keeps its default")
                .isEqualTo(2);
        assertThat(c.statusWrites().batchDelay()).isEqualTo(Duration.ofMillis(500));
        assertThat(c.enableRawExec()).isTrue();
        assertThat(c.rawExecLauncher()).containsExactly("nsenter", "-t", "1", "--", "systemd-run");
        assertThat(c.events()).isEqualTo(new dev.drover.controller.EventRate(5.5, 20));
    }

    @Test
    void flagsTakeEqualsFormsAndRepeatDevicePlugins() throws Exception {
        AgentConfig c = load(
                Map.of(),
                "--node=n",
                "--data-dir=/d",
                "--enable-raw-exec",
                "--device-plugin",
                "fake:a.yaml",
                "--device-plugin=nvidia");
        assertThat(c.dataDir()).isEqualTo(Path.of("/d"));
        assertThat(c.enableRawExec()).isTrue();
        assertThat(c.devicePlugins()).containsExactly("fake:a.yaml", "nvidia");
    }

    @Test
    void badSettingsAreRefusedWithAMessageNamingThem() throws Exception {
        assertThatThrownBy(() -> load(Map.of())).hasMessageContaining("node name is required");
        assertThatThrownBy(() -> load(Map.of(), "--node", "Bad_Node")).hasMessageContaining("not a valid");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--metrics-port", "x"))
                .hasMessageContaining("metricsPort");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--metrics-port", "70000"))
                .hasMessageContaining("out of range");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--api-port", "-2"))
                .hasMessageContaining("API port -2");
        assertThatThrownBy(() -> load(Map.of("DROVER_API_PORT", "9090"), "--node", "n"))
                .hasMessageContaining("cannot share port 9090");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--log-level", "loud"))
                .hasMessageContaining("log level");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--max-kill-timeout", "soon"))
                .hasMessageContaining("maxKillTimeout")
                .hasMessageContaining("not a duration");
        assertThatThrownBy(() -> load(Map.of("DROVER_ENABLE_RAW_EXEC", "maybe"), "--node", "n"))
                .hasMessageContaining("not a boolean");
        assertThatThrownBy(() -> load(Map.of(), "--node")).hasMessageContaining("--node needs a value");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--device-plugin", "quantum"))
                .hasMessageContaining("no device plugin named 'quantum'");
        assertThatThrownBy(() ->
                        load(Map.of(), "--config", dir.resolve("missing.yaml").toString(), "--node", "n"))
                .hasMessageContaining("cannot read the configuration file");

        Path file = dir.resolve("typo.yaml");
        Files.writeString(file, "gc: {intervall: 1m}\nlogLvl: info\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("unknown setting(s) [gc.intervall, logLvl]");
        Files.writeString(file, "gc: {maxDiskUsage: 1.5}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("fractions");
        Files.writeString(file, "events: {qps: 0}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("events.qps: 0.0 must be a positive number");
        Files.writeString(file, "events: {burst: lots}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("events.burst");
        Files.writeString(file, "concurrentStarts: -1\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("concurrentStarts must be 0 (no bound) or more, not -1");
        Files.writeString(file, "api: {maxFollowers: 4, maxFollowersPerCaller: 5}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("api.maxFollowersPerCaller: 5 must be between 1 and api.maxFollowers (4)");
        Files.writeString(file, "api: {reviewTimeout: 0s}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("api.reviewTimeout: 0s must be positive");
    }

    @Test
    void theHttpsApisLimitsComeFromTheFile() throws Exception {
        assertThat(load(Map.of("NODE_NAME", "n")).apiLimits()).isEqualTo(ApiLimits.DEFAULT);
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                api: {maxFollowers: 100, maxFollowersPerCaller: 4, reviewsPerSecond: 2.5, reviewBurst: 8,
                      reviewTimeout: 2s}
                """);
        assertThat(load(Map.of(), "--config", file.toString(), "--node", "n").apiLimits())
                .isEqualTo(new ApiLimits(100, 4, 2.5, 8, Duration.ofSeconds(2)));
    }
}
