package dev.drover.agent;

import java.nio.file.Path;

/** The agent's settings when neither a flag, the environment nor the config file gives them. */
final class AgentDefaults {

    static final Path DATA_DIR = Path.of("/var/lib/drover");
    static final int METRICS_PORT = 9090;
    /**
     * Not Nomad's 4646, which a Nomad client on the same node holds, nor a port the kubelet, kube-proxy, etcd or a
     * common node agent (exporters, CNI, DCGM) listens on: docs/configuration.md.
     */
    static final int API_PORT = 10346;
    /** Enough to keep two cores busy while starts wait on disk; few enough that each start stays quick. */
    static final int CONCURRENT_STARTS = 32;
    /** Where the chart's DaemonSet projects the agent's ServiceAccount token for audience drover.dev/agent. */
    /**
     * raw_exec task cgroups go below the agent's own cgroup (no cgroup outside the agent's is touched); the chart
     * sets {@code /drover}, at the host's root, which tasks outlive the agent's container in.
     */
    static final String CGROUP_PARENT = "drover";

    static final Path PEER_TOKEN_FILE = Path.of("/var/run/secrets/drover.dev/peer/token");

    /**
     * Where the chart's DaemonSet mounts the CA of the gateway's client certificate (not under /etc/drover, the
     * agent's own ConfigMap volume: a mount inside another ConfigMap volume is fragile).
     */
    static final Path GATEWAY_CA_FILE = Path.of("/etc/drover-gateway-ca/ca.crt");

    /** Where the kubelet serves its PodResources API (where a DaemonSet mounts the host's directory alike). */
    static final Path POD_RESOURCES_SOCKET = Path.of("/var/lib/kubelet/pod-resources/kubelet.sock");

    private AgentDefaults() {}
}
