package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeCapacity;
import dev.drover.api.v1alpha1.Names;
import dev.drover.cgroups.CgroupLimits;
import dev.drover.cgroups.CgroupParent;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import dev.drover.controller.events.EventRate;
import dev.drover.controller.events.TaskEventFilter;
import dev.drover.controller.status.StatusWriter;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.gc.GcPolicy;
import dev.drover.httpapi.ApiLimits;
import dev.drover.volumes.HostVolumes;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the agent is told at start. Each setting comes from, in order of
 * precedence: a command-line flag, an environment variable, the YAML file named
 * by {@code --config}, then its default. docs/configuration.md lists them all.
 *
 * @param kubeconfig     empty: in-cluster configuration (or the client's usual discovery)
 * @param enableExec     run exec tasks (confined host processes), where the agent can confine them
 * @param rawExecLauncher words put before each raw_exec and exec supervisor (host-process mode); empty runs them directly
 * @param cgroupParent   where each raw_exec task's cgroup is made: {@code /path} from the top of each cgroup hierarchy,
 *                       {@code path} below the agent's own cgroup
 * @param pidsMax        each raw_exec task's pids.max (processes and threads); 0 for no limit
 * @param metricsPort    port of /metrics, /healthz and /readyz; 0 picks a free one, -1 serves none
 * @param apiPort        port of the HTTPS API (task logs); 0 picks a free one, -1 serves none
 * @param bindAddress    the address the metrics and the HTTPS API listen on; empty: every interface
 * @param fieldSelector  watch with {@code spec.nodeName=<node>}; false for API servers that cannot select on
 *                       custom resource fields (before Kubernetes 1.31), which then send every allocation
 * @param taskEvents   how task events become Kubernetes Events ({@code events.taskEvents}): folded by default
 * @param concurrentStarts new allocations taken on at once at most (the rest wait their turn); 0 for no bound
 * @param apiLimits      what callers of the HTTPS API may cost the agent and the API server
 * @param peerTokenFile  the token this agent shows other nodes' agents (audience {@code drover.dev/agent}), read
 *                       at each use since a projected token is rotated
 * @param podResourcesSocket the kubelet's PodResources API, read when device plugins run: the devices Pods hold are
 *                       never reserved for allocations
 * @param devicePluginConfig settings of each device plugin by name ({@code nvidia: {devices: [0, 1]}}), added to
 *                       what {@code --device-plugin NAME:ARG} says
 * @param allocatable    the CPU and memory allocations may request on this node, together (node admission)
 * @param gatewayUser    the username of the Drover gateway's token (its ServiceAccount); empty: no gateway
 * @param gatewayCaFile  the CA that signs the gateway's client certificate, read again when it changes
 * @param credentialPollInterval how often a running task's Secrets and ConfigMaps are read again
 * @param containers     the oci driver's and the image store's settings
 * @param hostVolumes    the node's directories allocations may mount by name ({@code hostVolumes}); none by default
 * @param networks       allocations' networks and ports: the CNI plugins, the dynamic port range, the bridge
 * @param nodeSharing    how allocations and the kubelet's Pods share the node's CPU and memory, and the agent's Pod
 */
public record AgentConfig(
        Optional<Path> kubeconfig,
        String nodeName,
        Path dataDir,
        boolean enableRawExec,
        boolean enableExec,
        List<String> rawExecLauncher,
        String cgroupParent,
        long pidsMax,
        int metricsPort,
        int apiPort,
        Optional<InetAddress> bindAddress,
        List<String> devicePlugins,
        Path podResourcesSocket,
        String logLevel,
        Duration maxKillTimeout,
        GcPolicy gc,
        StatusWriter.Timing statusWrites,
        EventRate events,
        TaskEventFilter taskEvents,
        boolean fieldSelector,
        int concurrentStarts,
        ApiLimits apiLimits,
        Path peerTokenFile,
        Map<String, Map<String, Object>> devicePluginConfig,
        CpuMemory allocatable,
        Optional<String> gatewayUser,
        Path gatewayCaFile,
        Duration credentialPollInterval,
        ContainerSettings containers,
        HostVolumes hostVolumes,
        NetworkSettings networks,
        NodeSharingSettings nodeSharing) {

    static final Set<String> LOG_LEVELS = Set.of("error", "warn", "info", "debug", "trace");

    public AgentConfig {
        rawExecLauncher = List.copyOf(rawExecLauncher);
        devicePlugins = List.copyOf(devicePlugins);
        devicePluginConfig = Map.copyOf(devicePluginConfig);
    }

    /** The device plugins to run, each with its settings. */
    public List<DevicePlugins.Selection> devicePluginSelections() {
        return DevicePluginSettings.selections(DevicePlugins.discover(), devicePlugins, devicePluginConfig);
    }

    /** The agent's settings from its command line and environment (and the file they name). */
    public static AgentConfig load(List<String> args, Map<String, String> env) throws ConfigException {
        AgentFlags flags = AgentFlags.parse(args);
        JsonNode file = AgentConfigFile.named(flags.config(), env);
        AgentSettings s = new AgentSettings(flags, env, file);

        Optional<Path> kubeconfig =
                s.text("kubeconfig", "--kubeconfig", "KUBECONFIG").map(Path::of);
        String node = s.text("nodeName", "--node", "NODE_NAME")
                .orElseThrow(
                        () -> new ConfigException(
                                "the node name is required: --node NAME or NODE_NAME (the DaemonSet sets it from spec.nodeName)"));
        if (!Names.isSubdomain(node)) {
            throw new ConfigException("node name \"" + node + "\" is not a valid Kubernetes node name");
        }
        Path dataDir =
                s.text("dataDir", "--data-dir", "DROVER_DATA_DIR").map(Path::of).orElse(AgentDefaults.DATA_DIR);
        boolean rawExec = s.bool("enableRawExec", "--enable-raw-exec", "DROVER_ENABLE_RAW_EXEC")
                .orElse(false);
        boolean exec =
                s.bool("enableExec", "--enable-exec", "DROVER_ENABLE_EXEC").orElse(false);
        List<String> launcher = s.text("rawExecLauncher", null, "DROVER_RAW_EXEC_LAUNCHER")
                .map(l -> Arrays.stream(l.trim().split("\\s+"))
                        .filter(w -> !w.isEmpty())
                        .toList())
                .orElse(List.of());
        String cgroupParent = s.text("cgroupParent", "--cgroup-parent", "DROVER_CGROUP_PARENT")
                .orElse(AgentDefaults.CGROUP_PARENT);
        try {
            CgroupParent parsed = CgroupParent.parse(cgroupParent);
            if (parsed.segments().isEmpty()) {
                throw new IllegalArgumentException("it must name a cgroup of Drover's own, not the root");
            }
        } catch (IllegalArgumentException e) {
            throw new ConfigException("cgroupParent: " + e.getMessage());
        }
        long pidsMax = s.integer("pidsMax", "--pids-max", "DROVER_PIDS_MAX").orElse(0);
        if (pidsMax < 0 || pidsMax > CgroupLimits.MAX_PIDS) {
            throw new ConfigException("pidsMax must be 0 (no limit) to " + CgroupLimits.MAX_PIDS + ", not " + pidsMax);
        }
        int port = s.integer("metricsPort", "--metrics-port", "DROVER_METRICS_PORT")
                .orElse(AgentDefaults.METRICS_PORT);
        if (port < -1 || port > 65535) {
            throw new ConfigException("metrics port " + port + " is out of range (0..65535, or -1 for none)");
        }
        int apiPort = s.integer("apiPort", "--api-port", "DROVER_API_PORT").orElse(AgentDefaults.API_PORT);
        if (apiPort < -1 || apiPort > 65535) {
            throw new ConfigException("API port " + apiPort + " is out of range (0..65535, or -1 for none)");
        }
        if (apiPort > 0 && apiPort == port) {
            throw new ConfigException("the API and the metrics cannot share port " + port);
        }
        Optional<InetAddress> bindAddress = bindAddress(s);
        DevicePluginSettings.Chosen devices = DevicePluginSettings.choose(flags.devicePlugins(), env, file);
        String level = s.text("logLevel", "--log-level", "DROVER_LOG_LEVEL")
                .orElse("info")
                .toLowerCase(Locale.ROOT);
        if (!LOG_LEVELS.contains(level)) {
            throw new ConfigException("log level \"" + level + "\" is not one of " + LOG_LEVELS);
        }
        Duration maxKill =
                s.duration("maxKillTimeout", "--max-kill-timeout", null).orElse(Duration.ofSeconds(30));
        Duration poll = s.duration(
                        "credentialPollInterval", "--credential-poll-interval", "DROVER_CREDENTIAL_POLL_INTERVAL")
                .orElse(Duration.ofMinutes(1));
        if (poll.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new ConfigException("credentialPollInterval must be at least 1s, not " + Durations.format(poll));
        }

        GcPolicy d = GcPolicy.DEFAULT;
        GcPolicy gc;
        try {
            gc = new GcPolicy(
                    s.duration("gc.interval", null, null).orElse(d.interval()),
                    s.fraction("gc.maxDiskUsage").orElse(d.maxDiskUsage()),
                    s.fraction("gc.maxInodeUsage").orElse(d.maxInodeUsage()),
                    s.integer("gc.maxAllocations", null, null).orElse(d.maxAllocations()),
                    s.integer("gc.parallelDestroys", null, null).orElse(d.parallelDestroys()));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        StatusWriter.Timing t = StatusWriter.Timing.DEFAULT;
        StatusWriter.Timing writes = new StatusWriter.Timing(
                s.duration("statusWrites.batchDelay", null, null).orElse(t.batchDelay()),
                s.duration("statusWrites.resync", null, null).orElse(t.resync()),
                t.minBackoff(),
                t.maxBackoff());
        EventRate events;
        try {
            events = new EventRate(
                    s.number("events.qps").orElse(EventRate.DEFAULT.qps()),
                    s.integer("events.burst", null, null).orElse(EventRate.DEFAULT.burst()));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        TaskEventFilter taskEvents = taskEvents(s);
        boolean selector = s.bool("fieldSelector", "--field-selector", "DROVER_FIELD_SELECTOR")
                .orElse(true);
        int starts = s.integer("concurrentStarts", null, null).orElse(AgentDefaults.CONCURRENT_STARTS);
        if (starts < 0) {
            throw new ConfigException("concurrentStarts must be 0 (no bound) or more, not " + starts);
        }
        ApiLimits a = ApiLimits.DEFAULT;
        ApiLimits apiLimits;
        try {
            int maxFollowers = s.integer("api.maxFollowers", null, null).orElse(a.maxFollowers());
            apiLimits = new ApiLimits(
                    maxFollowers,
                    s.integer("api.maxFollowersPerCaller", null, null).orElse(a.maxFollowersPerCaller()),
                    s.integer("api.maxFollowersPerNamespace", null, null).orElse(ApiLimits.perNamespace(maxFollowers)),
                    s.number("api.reviewsPerSecond").orElse(a.reviewsPerSecond()),
                    s.integer("api.reviewBurst", null, null).orElse(a.reviewBurst()),
                    s.duration("api.reviewTimeout", null, null).orElse(a.reviewTimeout()));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        Path peerTokenFile = s.text("peerTokenFile", "--peer-token-file", "DROVER_PEER_TOKEN_FILE")
                .map(Path::of)
                .orElse(AgentDefaults.PEER_TOKEN_FILE);
        Optional<String> gatewayUser = s.text("gatewayUser", "--gateway-user", "DROVER_GATEWAY_USER");
        if (gatewayUser.isPresent() && !gatewayUser.get().matches("system:serviceaccount:[a-z0-9.-]+:[a-z0-9.-]+")) {
            throw new ConfigException("gatewayUser \"" + gatewayUser.get() + "\" is not a ServiceAccount's username"
                    + " (system:serviceaccount:NAMESPACE:NAME; the chart sets the gateway's)");
        }
        Path gatewayCaFile = s.text("gatewayCaFile", "--gateway-ca-file", "DROVER_GATEWAY_CA_FILE")
                .map(Path::of)
                .orElse(AgentDefaults.GATEWAY_CA_FILE);
        return new AgentConfig(
                kubeconfig,
                node,
                dataDir,
                rawExec,
                exec,
                launcher,
                cgroupParent,
                pidsMax,
                port,
                apiPort,
                bindAddress,
                devices.plugins(),
                s.text("podResourcesSocket", "--pod-resources-socket", "DROVER_POD_RESOURCES_SOCKET")
                        .map(Path::of)
                        .orElse(AgentDefaults.POD_RESOURCES_SOCKET),
                level,
                maxKill,
                gc,
                writes,
                events,
                taskEvents,
                selector,
                starts,
                apiLimits,
                peerTokenFile,
                devices.settings(),
                allocatable(s),
                gatewayUser,
                gatewayCaFile,
                poll,
                ContainerSettings.load(s),
                HostVolumeSettings.load(s, dataDir),
                NetworkSettings.load(s),
                NodeSharingSettings.load(s));
    }

    /** {@code bindAddress}: an IP address, taken as written (a host name would be a lookup at each start). */
    private static Optional<InetAddress> bindAddress(AgentSettings s) throws ConfigException {
        Optional<String> v = s.text("bindAddress", "--bind-address", "DROVER_BIND_ADDRESS");
        if (v.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.ofLiteral(v.get().trim()));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("bindAddress " + UserText.quote(v.get())
                    + " is not an IP address: give one such as 127.0.0.1 (this host only) or 0.0.0.0 (every IPv4"
                    + " interface), or leave it out for every interface");
        }
    }

    /** {@code events.taskEvents}: {@code folded} (the default), {@code all} or {@code notable}. */
    private static TaskEventFilter taskEvents(AgentSettings s) throws ConfigException {
        Optional<String> v = s.text("events.taskEvents", null, null);
        if (v.isEmpty()) {
            return TaskEventFilter.FOLDED;
        }
        try {
            return TaskEventFilter.parse(v.get());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(
                    "events.taskEvents: \"" + UserText.cutEscaped(v.get(), 64) + "\" is " + e.getMessage()
                            + " (folded: every Warning an Event and an allocation's Normal ones of a few seconds one;"
                            + " all: every task event an Event; notable: Warnings only)");
        }
    }

    /** {@code allocatable.*}, else the node's amounts less {@code reserved.*} (docs/configuration.md). */
    private static CpuMemory allocatable(AgentSettings s) throws ConfigException {
        CpuMemory d = NodeCapacity.DEFAULT_RESERVED;
        CpuMemory reserved = new CpuMemory(
                amount(s, "reserved.cpuMillis", null, null).orElse(d.cpuMillis()),
                amount(s, "reserved.memoryMB", null, null).orElse(d.memoryMB()));
        Optional<Long> cpu =
                amount(s, "allocatable.cpuMillis", "--allocatable-cpu-millis", "DROVER_ALLOCATABLE_CPU_MILLIS");
        Optional<Long> memory =
                amount(s, "allocatable.memoryMB", "--allocatable-memory-mb", "DROVER_ALLOCATABLE_MEMORY_MB");
        return NodeCapacity.allocatable(cpu, memory, reserved, NodeCapacity.detect());
    }

    private static Optional<Long> amount(AgentSettings s, String key, String flag, String env) throws ConfigException {
        Optional<Integer> v = s.integer(key, flag, env);
        if (v.isPresent() && v.get() < 0) {
            throw new ConfigException(key + " must be 0 or more, not " + v.get());
        }
        return v.map(Long::valueOf);
    }
}
