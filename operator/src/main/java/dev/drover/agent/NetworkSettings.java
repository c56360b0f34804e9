package dev.drover.agent;

import dev.drover.admission.NodePorts;
import dev.drover.common.UserText;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How the agent gives allocations their networks and ports (docs/networking.md): where the CNI plugins are
 * ({@code cniBinDir}, as on Kubernetes nodes), the range dynamic ports come from ({@code dynamicPorts}), and the
 * bridge ({@code bridge.name}) and subnet ({@code bridge.subnet}) of bridge networks, chosen clear of the usual Pod
 * and Service ranges (10.244/16, 10.42/16, 192.168/16, 10.96/12) and of Docker's (172.17/16).
 *
 * @param nodeAddress the address the node's ports are reached at (tasks' {@code DROVER_IP_*}, Services'
 *                    endpoints); empty: the Node's first InternalIP, else loopback
 */
public record NetworkSettings(
        Path cniBinDir,
        NodePorts.Range dynamicPorts,
        String bridgeName,
        String bridgeSubnet,
        Optional<String> nodeAddress) {

    public static final Path DEFAULT_CNI_BIN_DIR = Path.of("/opt/cni/bin");
    public static final String DEFAULT_BRIDGE = "drover0";
    public static final String DEFAULT_SUBNET = "172.26.64.0/20";

    static NetworkSettings load(AgentSettings s) throws ConfigException {
        Path bin = s.text("cniBinDir", "--cni-bin-dir", "DROVER_CNI_BIN_DIR")
                .map(Path::of)
                .orElse(DEFAULT_CNI_BIN_DIR);
        if (!bin.isAbsolute()) {
            throw new ConfigException("cniBinDir " + UserText.quote(bin.toString())
                    + " is not an absolute path: give the directory of the CNI plugins, e.g. /opt/cni/bin");
        }
        NodePorts.Range range;
        String text = s.text("dynamicPorts", "--dynamic-ports", "DROVER_DYNAMIC_PORTS")
                .orElse(NodePorts.Range.DEFAULT.toString());
        try {
            range = NodePorts.Range.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("dynamicPorts: " + e.getMessage());
        }
        String bridge = s.text("bridge.name", null, null).orElse(DEFAULT_BRIDGE);
        if (!bridge.matches("[a-zA-Z0-9_.-]{1,15}")) {
            throw new ConfigException("bridge.name " + UserText.quote(bridge)
                    + " is not an interface name (letters, digits, '_', '.', '-', at most 15)");
        }
        String subnet = s.text("bridge.subnet", null, null).orElse(DEFAULT_SUBNET);
        subnet(subnet);
        Optional<String> address = s.text("nodeAddress", "--node-address", "DROVER_NODE_ADDRESS");
        if (address.isPresent()) {
            try {
                InetAddress.ofLiteral(address.get().strip());
            } catch (IllegalArgumentException e) {
                throw new ConfigException("nodeAddress " + UserText.quote(address.get())
                        + " is not an IP address (the DaemonSet sets it from status.hostIP)");
            }
        }
        return new NetworkSettings(bin, range, bridge, subnet, address.map(String::strip));
    }

    /** An IPv4 subnet {@code a.b.c.d/n} with n from 8 to 28 (room for a gateway and allocations). */
    private static void subnet(String subnet) throws ConfigException {
        String[] parts = subnet.split("/", -1);
        boolean ok = parts.length == 2 && parts[1].matches("\\d{1,2}");
        if (ok) {
            try {
                ok = InetAddress.ofLiteral(parts[0]) instanceof Inet4Address
                        && Integer.parseInt(parts[1]) >= 8
                        && Integer.parseInt(parts[1]) <= 28;
            } catch (IllegalArgumentException e) {
                ok = false;
            }
        }
        if (!ok) {
            throw new ConfigException("bridge.subnet " + UserText.quote(subnet)
                    + " is not an IPv4 subnet of /8 to /28, e.g. " + DEFAULT_SUBNET);
        }
    }
}
