package dev.drover.network;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The CNI configs the agent runs, built as JSON: each plugin's config as its stdin carries it ({@code cniVersion} and
 * the list's {@code name} in each, {@code runtimeConfig} filled in, {@code prevResult} added per call).
 *
 * <p>Ports: each {@link PortMapping} is mapped for both TCP and UDP, as Nomad maps a bridge allocation's ports; the
 * API's ports name no protocol, and a task listening on UDP would otherwise be unreachable with no error anywhere.
 */
final class NetworkConfigs {

    /** The CNI spec version the configs speak; the reference plugins 1.x speak it. */
    static final String CNI_VERSION = "1.0.0";
    /** The bridge network's name: host-local's lease directory and the plugins' iptables comments carry it. */
    static final String NETWORK = "drover";

    static final String LOOPBACK_NETWORK = "drover-loopback";

    private NetworkConfigs() {}

    /** The loopback plugin on {@code lo}: brings it up. */
    static ObjectNode loopback() {
        return plugin(LOOPBACK_NETWORK, "loopback");
    }

    /**
     * The bridge's chain: {@code bridge} (a veth from the allocation's {@code eth0} to the node's bridge, the bridge
     * its gateway, outgoing traffic masqueraded, hairpin on) with {@code host-local} leasing from {@code settings}'
     * subnet into {@code ipamDir}, then {@code portmap} when there are ports (with SNAT, so a host port answers on
     * 127.0.0.1 too).
     */
    static List<ObjectNode> bridge(BridgeSettings settings, Path ipamDir, List<PortMapping> ports) {
        List<ObjectNode> chain = new ArrayList<>();
        ObjectNode bridge = plugin(NETWORK, "bridge")
                .put("bridge", settings.bridge())
                .put("isGateway", true)
                .put("ipMasq", true)
                .put("hairpinMode", true);
        ObjectNode ipam = bridge.putObject("ipam").put("type", "host-local");
        ipam.putArray("ranges").addArray().addObject().put("subnet", settings.subnet());
        ipam.putArray("routes").addObject().put("dst", "0.0.0.0/0");
        ipam.put("dataDir", ipamDir.toString());
        chain.add(bridge);
        if (!ports.isEmpty()) {
            ObjectNode portmap = plugin(NETWORK, "portmap").put("snat", true);
            portmap.putObject("capabilities").put("portMappings", true);
            ArrayNode mappings = portmap.putObject("runtimeConfig").putArray("portMappings");
            for (String protocol : List.of("tcp", "udp")) {
                for (PortMapping p : ports) {
                    mappings.addObject()
                            .put("hostPort", p.hostPort())
                            .put("containerPort", p.to())
                            .put("protocol", protocol);
                }
            }
            chain.add(portmap);
        }
        return chain;
    }

    /** {@code config} as one call's stdin: with {@code prevResult} when there is one. */
    static ObjectNode withPrevResult(ObjectNode config, ObjectNode prevResult) {
        ObjectNode stdin = config.deepCopy();
        if (prevResult != null) {
            stdin.set("prevResult", prevResult.deepCopy());
        }
        return stdin;
    }

    private static ObjectNode plugin(String network, String type) {
        return CniPlugins.JSON
                .createObjectNode()
                .put("cniVersion", CNI_VERSION)
                .put("name", network)
                .put("type", type);
    }
}
