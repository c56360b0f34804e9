package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.Port;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The network an allocation's tasks share, as its agent set it up: its mode, the network namespace the tasks join
 * (none in {@code host} mode), its address, and the host port each of its ports holds.
 *
 * @param namespace   the network namespace's path (a bind mount of it); null in host mode
 * @param ip          the allocation's address on the bridge (bridge), the node's (host), null (none)
 * @param nodeAddress where the node's ports are reached
 * @param ports       each port: its host port and the port the tasks listen on
 */
public record AllocNetwork(
        NetworkMode mode, Path namespace, String ip, String nodeAddress, List<NetworkStatus.PortStatus> ports) {

    /** Where loopback checks connect: the host's IPv4 loopback. */
    private static final byte[] LOOPBACK = {127, 0, 0, 1};

    public AllocNetwork {
        ports = List.copyOf(ports);
    }

    /** The status the allocation reports: {@code status.network}. */
    public NetworkStatus status() {
        return new NetworkStatus(mode, ip, ports.isEmpty() ? null : ports);
    }

    /**
     * The tasks' variables for each port ({@code NAME} upper-cased, '-' as '_'): {@code DROVER_PORT_NAME} the port to
     * listen on, {@code DROVER_HOST_PORT_NAME} the node's port, {@code DROVER_IP_NAME} and {@code DROVER_ADDR_NAME}
     * where the node's port is reached.
     */
    public Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        for (NetworkStatus.PortStatus p : ports) {
            String name = Port.envName(p.name());
            env.put("DROVER_PORT_" + name, Integer.toString(p.to()));
            env.put("DROVER_HOST_PORT_" + name, Integer.toString(p.hostPort()));
            env.put("DROVER_IP_" + name, nodeAddress);
            env.put("DROVER_ADDR_" + name, hostAndPort(nodeAddress, p.hostPort()));
        }
        return env;
    }

    /**
     * Where a check naming port {@code name} connects: in a bridge network, the port the tasks listen on at the
     * allocation's address (the agent reaches its bridge directly, whatever the node's firewall does to its ports);
     * otherwise the node's port on loopback. Empty when there is no such port.
     */
    public Optional<InetSocketAddress> checkAddress(String name) {
        for (NetworkStatus.PortStatus p : ports) {
            if (p.name().equals(name)) {
                try {
                    return Optional.of(
                            mode == NetworkMode.BRIDGE && ip != null
                                    ? new InetSocketAddress(InetAddress.ofLiteral(ip), p.to())
                                    : new InetSocketAddress(InetAddress.getByAddress(LOOPBACK), p.hostPort()));
                } catch (java.net.UnknownHostException | IllegalArgumentException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    private static String hostAndPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
