package dev.drover.agent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The agent's command line: every flag it accepts (the one table the parser and {@code --help} read), and what a
 * command line set.
 */
record AgentFlags(Map<String, String> values, List<String> devicePlugins, Optional<Path> config) {

    /**
     * One command-line flag.
     *
     * @param value how --help shows its value; null for a switch (which also takes {@code --flag=false})
     */
    record Flag(String name, String value, String meaning) {
        boolean isSwitch() {
            return value == null;
        }
    }

    /** Parsed command line of the agent. */

    /** Every flag, in the order --help lists them: the parser accepts these and no others. */
    static final List<Flag> ALL = List.of(
            new Flag("--config", "FILE", "a YAML file with any of the settings (docs/configuration.md)"),
            new Flag("--kubeconfig", "FILE", "API server credentials; none: the in-cluster ServiceAccount"),
            new Flag("--node", "NAME", "the node this agent runs allocations for (required)"),
            new Flag(
                    "--data-dir",
                    "DIR",
                    "state store and allocation directories (default " + AgentDefaults.DATA_DIR + ")"),
            new Flag("--enable-raw-exec", null, "enable the raw_exec driver (host processes)"),
            new Flag("--enable-exec", null, "enable the exec driver (host processes in namespaces, as their own user)"),
            new Flag("--enable-oci", null, "enable the oci driver (container images run by runc or crun)"),
            new Flag("--oci-runtime", "PATH", "the OCI runtime the oci driver runs (default: runc or crun, found)"),
            new Flag("--cni-bin-dir", "DIR", "the CNI plugins for bridge and none networks (default /opt/cni/bin)"),
            new Flag("--dynamic-ports", "LOW-HIGH", "the range dynamic host ports come from (default 20000-32000)"),
            new Flag("--node-address", "IP", "where the node's ports are reached (default: the Node's InternalIP)"),
            new Flag(
                    "--node-sharing",
                    "MODE",
                    "resize or dedicated: how allocations and the kubelet's Pods share the node (default: resize on"
                            + " Kubernetes 1.35+ in a Pod, else dedicated)"),
            new Flag("--pod-name", "NAME", "the agent's own Pod (the DaemonSet sets POD_NAME)"),
            new Flag("--pod-namespace", "NS", "the agent's own Pod's namespace (the DaemonSet sets POD_NAMESPACE)"),
            new Flag("--registry-ca-file", "FILE", "a CA that image registries' certificates may chain to"),
            new Flag(
                    "--cgroup-parent",
                    "PATH",
                    "raw_exec task cgroups: /PATH from the hierarchy's top, PATH below the agent's own (default "
                            + AgentDefaults.CGROUP_PARENT + ")"),
            new Flag("--pids-max", "N", "each raw_exec task's pids.max (default 0: no limit)"),
            new Flag(
                    "--metrics-port",
                    "N",
                    "port of /metrics, /healthz, /readyz (default " + AgentDefaults.METRICS_PORT
                            + "; 0 any free port, -1 none)"),
            new Flag(
                    "--api-port",
                    "N",
                    "port of the HTTPS API (default " + AgentDefaults.API_PORT + "; 0 any free port, -1 none)"),
            new Flag(
                    "--bind-address",
                    "ADDRESS",
                    "IP address the metrics and the HTTPS API listen on (default every interface; 127.0.0.1:"
                            + " this host only)"),
            new Flag(
                    "--peer-token-file",
                    "FILE",
                    "token for other nodes' agents, audience drover.dev/agent (default " + AgentDefaults.PEER_TOKEN_FILE
                            + ")"),
            new Flag(
                    "--gateway-user",
                    "USER",
                    "the Drover gateway's ServiceAccount username (system:serviceaccount:NS:NAME); none: no gateway"),
            new Flag(
                    "--gateway-ca-file",
                    "FILE",
                    "CA of the gateway's client certificate (default " + AgentDefaults.GATEWAY_CA_FILE + ")"),
            new Flag("--log-level", "LEVEL", "error, warn, info (default), debug or trace"),
            new Flag(
                    "--credential-poll-interval",
                    "DURATION",
                    "how often running tasks' Secrets and ConfigMaps are read again (default 1m)"),
            new Flag(
                    "--max-kill-timeout",
                    "DURATION",
                    "cap on every task's killTimeout and shutdownDelay" + " (default 30s)"),
            new Flag(
                    "--field-selector",
                    "BOOL",
                    "watch only this node's allocations (default true; false for" + " Kubernetes before 1.31)"),
            new Flag(
                    "--allocatable-cpu-millis",
                    "N",
                    "CPU allocations may request, in millicores (default the node's cores less reserved.cpuMillis)"),
            new Flag(
                    "--allocatable-memory-mb",
                    "N",
                    "memory allocations may request, in MB (default the node's memory less reserved.memoryMB)"),
            new Flag(
                    "--device-plugin",
                    "NAME[:ARG]",
                    "run a device plugin: nvidia, nvidia:LIBRARY, fake:FILE" + " (repeatable)"),
            new Flag(
                    "--pod-resources-socket",
                    "PATH",
                    "the kubelet's PodResources API: devices Pods hold are not given to allocations (default "
                            + AgentDefaults.POD_RESOURCES_SOCKET + ")"));

    static final Set<String> WITH_VALUE = ALL.stream()
            .filter(f -> !f.isSwitch())
            .map(Flag::name)
            .collect(java.util.stream.Collectors.toUnmodifiableSet());
    static final Set<String> SWITCHES = ALL.stream()
            .filter(Flag::isSwitch)
            .map(Flag::name)
            .collect(java.util.stream.Collectors.toUnmodifiableSet());

    /** The flags as --help shows them: one a line, name and value, then what it sets. */
    static String help() {
        StringBuilder out = new StringBuilder();
        for (Flag f : ALL) {
            String shown = f.isSwitch() ? f.name() : f.name() + " " + f.value();
            out.append("  ")
                    .append(shown)
                    .append(" ".repeat(Math.max(2, 30 - shown.length())))
                    .append(f.meaning())
                    .append('\n');
        }
        return out.toString();
    }

    static AgentFlags parse(List<String> args) throws ConfigException {
        Map<String, String> values = new java.util.HashMap<>();
        List<String> plugins = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (SWITCHES.contains(name)) {
                values.put(name, value == null ? "true" : value);
            } else if (WITH_VALUE.contains(name)) {
                if (value == null) {
                    if (i + 1 >= args.size()) {
                        throw new ConfigException(name + " needs a value");
                    }
                    value = args.get(++i);
                }
                if (name.equals("--device-plugin")) {
                    plugins.add(value);
                } else {
                    values.put(name, value);
                }
            } else {
                throw new ConfigException("unknown argument \"" + arg + "\"");
            }
        }
        return new AgentFlags(
                values, plugins, Optional.ofNullable(values.get("--config")).map(Path::of));
    }
}
