package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeCapacity;
import dev.drover.httpapi.ApiLimits;
import dev.drover.volumes.HostVolume;
import dev.drover.volumes.HostVolumes;
import java.net.InetAddress;
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
        assertThat(c.enableExec()).as("exec is off unless enabled").isFalse();
        assertThat(c.metricsPort()).isEqualTo(9090);
        assertThat(c.apiPort()).isEqualTo(10346);
        assertThat(c.bindAddress()).as("every interface").isEmpty();
        assertThat(c.kubeconfig()).isEmpty();
        assertThat(c.maxKillTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.gc().maxAllocations()).isEqualTo(50);
        assertThat(c.statusWrites().batchDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.statusWrites().pendingDelay()).isEqualTo(Duration.ofMillis(200));
        assertThat(c.taskEvents())
                .as("every Warning an Event, Normal ones folded (docs/allocations.md#status)")
                .isEqualTo(dev.drover.controller.events.TaskEventFilter.FOLDED);
        assertThat(c.events())
                .as("the kubelet's --event-qps and --event-burst")
                .isEqualTo(new dev.drover.controller.events.EventRate(50, 100));
        assertThat(c.concurrentStarts()).isEqualTo(32);
        assertThat(c.peerTokenFile()).isEqualTo(Path.of("/var/run/secrets/drover.dev/peer/token"));
        assertThat(c.credentialPollInterval()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void nodeSharingIsChosenByTheServerUnlessSetAndResizeNeedsTheAgentsPod() throws Exception {
        AgentConfig unset = load(Map.of("NODE_NAME", "n", "POD_NAME", "drover-x7k2p", "POD_NAMESPACE", "drover"));
        assertThat(unset.nodeSharing().mode()).isEmpty();
        assertThat(unset.nodeSharing().pod()).hasValue("drover/drover-x7k2p");
        assertThat(dev.drover.sharing.NodeSharing.chosen(true, 35)).hasToString("resize");
        assertThat(dev.drover.sharing.NodeSharing.chosen(true, 34)).hasToString("dedicated");
        assertThat(dev.drover.sharing.NodeSharing.chosen(false, 35))
                .as("outside a Pod")
                .hasToString("dedicated");
        assertThat(load(Map.of("DROVER_NODE_SHARING", "Dedicated"), "--node", "n")
                        .nodeSharing()
                        .mode())
                .hasValue(dev.drover.sharing.NodeSharing.DEDICATED);

        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--node-sharing", "resize"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--pod-name and --pod-namespace");
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--node-sharing", "shared"))
                .hasMessage("nodeSharing \"shared\" is not one of resize, dedicated");
        assertThatThrownBy(() -> load(Map.of("POD_NAME", "drover-x"), "--node", "n"))
                .hasMessageContaining("give both or neither");
    }

    @Test
    void theCredentialPollIntervalComesFromFlagOrEnvironmentAndIsAtLeastASecond() throws Exception {
        assertThat(load(Map.of("DROVER_CREDENTIAL_POLL_INTERVAL", "5s"), "--node", "n")
                        .credentialPollInterval())
                .isEqualTo(Duration.ofSeconds(5));
        assertThat(load(Map.of(), "--node", "n", "--credential-poll-interval", "2m")
                        .credentialPollInterval())
                .isEqualTo(Duration.ofMinutes(2));
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--credential-poll-interval", "100ms"))
                .hasMessage("credentialPollInterval must be at least 1s, not 100ms");
    }

    @Test
    void theCgroupParentIsBelowTheAgentsOwnByDefaultAndNeverClimbsOut() throws Exception {
        AgentConfig c = load(Map.of("NODE_NAME", "n"));
        assertThat(c.cgroupParent()).isEqualTo("drover");
        assertThat(c.pidsMax()).isZero();
        AgentConfig set = load(Map.of("NODE_NAME", "n", "DROVER_PIDS_MAX", "512"), "--cgroup-parent", "/drover");
        assertThat(set.cgroupParent()).isEqualTo("/drover");
        assertThat(set.pidsMax()).isEqualTo(512);
        for (String bad : List.of("/", "drover/../../etc", "/a//b", "a b", "/cgroup.procs")) {
            assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--cgroup-parent", bad))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("cgroupParent: ");
        }
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n", "DROVER_PIDS_MAX", "-1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("pidsMax");
    }

    @Test
    void hostVolumesAreNoneByDefaultAndLentOnlyToTheNamespacesTheyList() throws Exception {
        assertThat(load(Map.of("NODE_NAME", "n")).hostVolumes().all()).isEmpty();
        Path models = Files.createDirectories(dir.resolve("models"));
        Path scratch = Files.createDirectories(dir.resolve("scratch"));
        Path file = dir.resolve("volumes.yaml");
        Files.writeString(
                file,
                "dataDir: " + dir.resolve("data") + "\nhostVolumes:\n"
                        + "  models: {path: " + models + ", readOnly: true, namespaces: [\"*\"]}\n"
                        + "  scratch: {path: " + scratch + "}\n");
        HostVolumes v =
                load(Map.of("NODE_NAME", "n"), "--config", file.toString()).hostVolumes();
        assertThat(v.get("models").orElseThrow())
                .isEqualTo(new HostVolume("models", models, true, java.util.Set.of("*")));
        assertThat(v.get("models").orElseThrow().allows("any")).isTrue();
        assertThat(v.get("scratch").orElseThrow().readOnly()).isFalse();
        assertThat(v.get("scratch").orElseThrow().allows("default"))
                .as("no namespaces: lent to none")
                .isFalse();
    }

    @Test
    void aHostVolumePathMustBeAnAbsoluteCleanRealDirectoryOutsideTheDataDir() throws Exception {
        Path real = Files.createDirectories(dir.resolve("real"));
        Files.createSymbolicLink(dir.resolve("link"), real);
        Files.writeString(dir.resolve("file"), "x");
        Path data = Files.createDirectories(dir.resolve("data"));
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("relative/dir", "hostVolumes.v.path: \"relative/dir\" is not an absolute path");
        cases.put(
                real + "/../real",
                "hostVolumes.v.path: \"" + real + "/../real\" is not a clean path (no '.', '..',"
                        + " '//' or trailing '/')");
        cases.put(
                dir + "/missing",
                "hostVolumes.v.path: \"" + dir + "/missing\" does not exist: create the directory" + " first");
        cases.put(
                dir + "/link",
                "hostVolumes.v.path: \"" + dir + "/link\" is a symbolic link: name the directory" + " itself");
        cases.put(
                dir + "/link/",
                "hostVolumes.v.path: \"" + dir + "/link/\" is not a clean path (no '.', '..', '//'"
                        + " or trailing '/')");
        cases.put(dir + "/file", "hostVolumes.v.path: \"" + dir + "/file\" is not a directory");
        cases.put(
                data + "/allocs",
                "hostVolumes.v.path: \"" + data + "/allocs\" is, holds or is inside the agent's" + " data dir " + data
                        + ", whose other allocations no task may see");
        cases.put(
                "/",
                "hostVolumes.v.path: \"/\" is, holds or is inside the agent's data dir " + data
                        + ", whose other allocations no task may see");
        for (var c : cases.entrySet()) {
            Path file = dir.resolve("bad.yaml");
            Files.writeString(file, "dataDir: " + data + "\nhostVolumes:\n  v: {path: \"" + c.getKey() + "\"}\n");
            assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage(c.getValue());
        }
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, "hostVolumes:\n  v: {path: " + real + ", namespaces: [Team_A]}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessage("hostVolumes.v.namespaces: \"Team_A\" is not a namespace name (or \"*\" for every"
                        + " namespace)");
        Files.writeString(file, "hostVolumes:\n  v: {path: " + real + ", writable: true}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessage("hostVolumes.v.writable: unknown key (known: path, readOnly, namespaces)");
    }

    @Test
    void containerSettingsComeFromFlagsEnvironmentAndFileAndBadOnesAreRefused() throws Exception {
        assertThat(load(Map.of("NODE_NAME", "n")).containers().enabled()).isFalse();
        Path file = dir.resolve("oci.yaml");
        Files.writeString(file, """
                enableOci: true
                ociAllowUnconfined: true
                ociRootfs: copy
                registryMirrors:
                  docker.io: [mirror.local:5000]
                maxImageSizeMB: 512
                imageGC:
                  highThresholdPercent: 90
                  lowThresholdPercent: 70
                  maxAge: 168h
                """);
        ContainerSettings c = load(Map.of("NODE_NAME", "n"), "--config", file.toString(), "--oci-runtime", "/opt/runc")
                .containers();
        assertThat(c.enabled()).isTrue();
        assertThat(c.runtime()).contains(Path.of("/opt/runc"));
        assertThat(c.allowUnconfined()).isTrue();
        assertThat(c.allowPrivileged()).isFalse();
        assertThat(c.registryMirrors()).containsEntry("docker.io", List.of("mirror.local:5000"));
        assertThat(c.maxImageBytes()).isEqualTo(512L << 20);
        assertThat(c.imageGc().highPercent()).isEqualTo(90);
        assertThat(c.imageGc().maxAge()).isEqualTo(java.time.Duration.ofDays(7));
        assertThat(c.rootfs()).contains(dev.drover.driver.oci.RootfsMode.COPY);
        assertThat(load(Map.of("NODE_NAME", "n")).containers().rootfs())
                .as("auto")
                .isEmpty();
        assertThat(load(Map.of("NODE_NAME", "n", "DROVER_OCI_ROOTFS", "overlay"))
                        .containers()
                        .rootfs())
                .contains(dev.drover.driver.oci.RootfsMode.OVERLAY);
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n", "DROVER_OCI_ROOTFS", "copy".repeat(100))))
                .isInstanceOf(ConfigException.class)
                .hasMessage(
                        "ociRootfs: \"" + "copy".repeat(25) + "\"... (400 characters) is not auto, overlay or copy");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--oci-runtime", "runc"))
                .hasMessageContaining("ociRuntime")
                .hasMessageContaining("absolute path");
        Files.writeString(file, "imageGC:\n  highThresholdPercent: 50\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessageContaining("must be at most highThresholdPercent");
        Files.writeString(file, "registryMirrors:\n  docker.io: [https://mirror/path]\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessageContaining("is not a host[:port]");
    }

    @Test
    void cdiSpecDirsDefaultToEtcAndVarRunAndHooksRunOnlyWhenListed() throws Exception {
        ContainerSettings plain = load(Map.of("NODE_NAME", "n")).containers();
        assertThat(plain.cdiSpecDirs()).containsExactly(Path.of("/etc/cdi"), Path.of("/var/run/cdi"));
        assertThat(plain.cdiAllowedHooks()).isEmpty();
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "cdiSpecDirs: [/opt/cdi]\ncdiAllowedHooks: [/usr/bin/nvidia-cdi-hook]\n");
        ContainerSettings set =
                load(Map.of("NODE_NAME", "n"), "--config", file.toString()).containers();
        assertThat(set.cdiSpecDirs()).containsExactly(Path.of("/opt/cdi"));
        assertThat(set.cdiAllowedHooks()).containsExactly("/usr/bin/nvidia-cdi-hook");
        assertThat(load(Map.of("NODE_NAME", "n", "DROVER_CDI_SPEC_DIRS", "/a:/b"), "--config", file.toString())
                        .containers()
                        .cdiSpecDirs())
                .containsExactly(Path.of("/a"), Path.of("/b"));
        Files.writeString(file, "cdiSpecDirs: [cdi/../x]\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessage("cdiSpecDirs: \"cdi/../x\" is not an absolute, clean path");
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
    void taskEventsComeFromTheFileAsFoldedAllOrNotableAndAnythingElseIsAnError() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "events: {taskEvents: folded}\n");
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).taskEvents())
                .isEqualTo(dev.drover.controller.events.TaskEventFilter.FOLDED);
        Files.writeString(file, "events: {taskEvents: notable}\n");
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).taskEvents())
                .isEqualTo(dev.drover.controller.events.TaskEventFilter.NOTABLE);
        Files.writeString(file, "events: {taskEvents: all}\n");
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).taskEvents())
                .isEqualTo(dev.drover.controller.events.TaskEventFilter.ALL);
        Files.writeString(file, "events: {taskEvents: \"Warnings\\u001b[31m\"}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(
                        "events.taskEvents: \"Warnings\\u001b[31m\" is not one of [folded, all, notable]");
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
        assertThat(c.events()).isEqualTo(new dev.drover.controller.events.EventRate(5.5, 20));
    }

    @Test
    void flagsTakeEqualsFormsAndRepeatDevicePlugins() throws Exception {
        AgentConfig c = load(
                Map.of(),
                "--node=n",
                "--data-dir=/d",
                "--enable-raw-exec",
                "--enable-exec",
                "--device-plugin",
                "fake:a.yaml",
                "--device-plugin=nvidia");
        assertThat(c.dataDir()).isEqualTo(Path.of("/d"));
        assertThat(c.enableRawExec()).isTrue();
        assertThat(c.enableExec()).isTrue();
        assertThat(load(Map.of("NODE_NAME", "n", "DROVER_ENABLE_EXEC", "true")).enableExec())
                .isTrue();
        assertThat(c.devicePlugins()).containsExactly("fake:a.yaml", "nvidia");
    }

    @Test
    void devicePluginSettingsFromTheFileReachThePluginAndAreCheckedAtStart() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                devicePlugins: [nvidia]
                devicePluginConfig:
                  nvidia: {devices: [0, "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f"], excludeDevices: [3]}
                """);
        AgentConfig c = load(Map.of("NODE_NAME", "n"), "--config", file.toString());
        assertThat(c.devicePluginSelections())
                .singleElement()
                .satisfies(s -> assertThat(s.config())
                        .containsEntry("devices", List.of(0, "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f"))
                        .containsEntry("excludeDevices", List.of(3)));

        Files.writeString(file, "devicePlugins: [nvidia]\ndevicePluginConfig: {nvidia: {devices: [all]}}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("devicePluginConfig.nvidia")
                .hasMessageContaining("config.devices[0]: \"all\" is neither a GPU index");
        Files.writeString(file, "devicePluginConfig: {nvidia: {devices: [0]}}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessageContaining("devicePluginConfig.nvidia: no such device plugin runs");
        Files.writeString(
                file, "devicePlugins: [\"nvidia:/lib/nvml.so\"]\ndevicePluginConfig: {nvidia: {library: x}}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessageContaining("devicePluginConfig.nvidia.library is already set");
        Files.writeString(file, "devicePlugins: [nvidia]\ndevicePluginConfig: {nvidia: [0, 1]}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .hasMessageContaining("devicePluginConfig.nvidia: must be a mapping");
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
        assertThatThrownBy(() -> load(Map.of(), "--node", "n", "--bind-address", "localhost"))
                .hasMessageContaining("bindAddress \"localhost\" is not an IP address");
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
        Files.writeString(file, "api: {maxFollowers: 4, maxFollowersPerCaller: 2, maxFollowersPerNamespace: 0}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("api.maxFollowersPerNamespace: 0 must be between 1 and api.maxFollowers (4)");
        Files.writeString(file, "api: {reviewTimeout: 0s}\n");
        assertThatThrownBy(() -> load(Map.of(), "--config", file.toString(), "--node", "n"))
                .hasMessageContaining("api.reviewTimeout: 0s must be positive");
    }

    @Test
    void theBindAddressIsAnIpAddressFromTheFlagTheEnvironmentOrTheFile() throws Exception {
        assertThat(load(Map.of(), "--node", "n", "--bind-address", "127.0.0.1").bindAddress())
                .contains(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}));
        assertThat(load(Map.of("DROVER_BIND_ADDRESS", "::1"), "--node", "n").bindAddress())
                .contains(InetAddress.getByName("::1"));
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, "bindAddress: 0.0.0.0\n");
        assertThat(load(Map.of(), "--config", file.toString(), "--node", "n")
                        .bindAddress()
                        .orElseThrow()
                        .isAnyLocalAddress())
                .isTrue();
    }

    @Test
    void theHttpsApisLimitsComeFromTheFile() throws Exception {
        assertThat(load(Map.of("NODE_NAME", "n")).apiLimits()).isEqualTo(ApiLimits.DEFAULT);
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                api: {maxFollowers: 100, maxFollowersPerCaller: 4, maxFollowersPerNamespace: 30, reviewsPerSecond: 2.5,
                      reviewBurst: 8, reviewTimeout: 2s}
                """);
        assertThat(load(Map.of(), "--config", file.toString(), "--node", "n").apiLimits())
                .isEqualTo(new ApiLimits(100, 4, 30, 2.5, 8, Duration.ofSeconds(2)));
        Files.writeString(file, "api: {maxFollowers: 8, maxFollowersPerCaller: 2}\n");
        assertThat(load(Map.of(), "--config", file.toString(), "--node", "n")
                        .apiLimits()
                        .maxFollowersPerNamespace())
                .as("unset, a quarter of maxFollowers: a file written before the bound stays valid")
                .isEqualTo(2);
    }

    @Test
    void allocatableDefaultsToTheNodeLessTheReserve() throws Exception {
        CpuMemory node = NodeCapacity.detect();
        AgentConfig c = load(Map.of("NODE_NAME", "n"));
        assertThat(c.allocatable())
                .as("kubelet's system-reserved: 100 millicores and 256 MB by default")
                .isEqualTo(new CpuMemory(Math.max(0, node.cpuMillis() - 100), Math.max(0, node.memoryMB() - 256)));

        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                reserved: {cpuMillis: 0, memoryMB: 0}
                """);
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).allocatable())
                .isEqualTo(node);
    }

    @Test
    void allocatableComesFromFlagEnvironmentOrFileAndMustNotBeNegative() throws Exception {
        Path file = dir.resolve("agent.yaml");
        Files.writeString(file, """
                allocatable: {cpuMillis: 3000, memoryMB: 2048}
                reserved: {memoryMB: 100000000}
                """);
        assertThat(load(Map.of("NODE_NAME", "n"), "--config", file.toString()).allocatable())
                .as("a configured amount is taken as it is: no reserve comes off it")
                .isEqualTo(new CpuMemory(3000, 2048));
        assertThat(load(
                                Map.of("NODE_NAME", "n", "DROVER_ALLOCATABLE_MEMORY_MB", "512"),
                                "--config",
                                file.toString(),
                                "--allocatable-cpu-millis=1500")
                        .allocatable())
                .isEqualTo(new CpuMemory(1500, 512));
        assertThat(load(Map.of("NODE_NAME", "n"), "--allocatable-memory-mb", "0")
                        .allocatable()
                        .memoryMB())
                .isZero();

        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--allocatable-memory-mb", "-1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("allocatable.memoryMB must be 0 or more, not -1");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n", "DROVER_ALLOCATABLE_CPU_MILLIS", "two")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("allocatable.cpuMillis: \"two\" is not a whole number");
        Files.writeString(file, "reserved: {cpuMillis: -5}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("reserved.cpuMillis must be 0 or more, not -5");
        Files.writeString(file, "allocatable: {gpus: 1}\n");
        assertThatThrownBy(() -> load(Map.of("NODE_NAME", "n"), "--config", file.toString()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("allocatable.gpus");
    }
}
