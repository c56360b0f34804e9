package dev.drover.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.allocrunner.NetworkSetup;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.controller.Admissions;
import dev.drover.kube.NodeView;
import dev.drover.network.AllocNetworks;
import dev.drover.network.AttachedNetwork;
import dev.drover.network.BridgeSettings;
import dev.drover.network.CniPlugins;
import dev.drover.network.NetworkMode;
import dev.drover.network.PortMapping;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's {@link NetworkSetup}: allocations' host ports from admission, and their {@code none} and {@code bridge}
 * networks from the CNI plugins in {@code cniBinDir} ({@link AllocNetworks}), kept in the store as the JSON of what
 * was made, so a restarted agent checks and tears down the very namespace and plugin configs it set up.
 */
final class AgentNetworks implements NetworkSetup {

    private static final Logger LOG = LoggerFactory.getLogger(AgentNetworks.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final AllocNetworks networks;
    private final Admissions admissions;
    private final String nodeAddress;

    private AgentNetworks(AllocNetworks networks, Admissions admissions, String nodeAddress) {
        this.networks = networks;
        this.admissions = admissions;
        this.nodeAddress = nodeAddress;
    }

    static AgentNetworks create(AgentConfig config, KubernetesClient client, Admissions admissions) throws IOException {
        NetworkSettings s = config.networks();
        AllocNetworks networks = new AllocNetworks(
                config.dataDir(), new CniPlugins(s.cniBinDir()), new BridgeSettings(s.bridgeName(), s.bridgeSubnet()));
        String address = s.nodeAddress().orElseGet(() -> nodeAddress(client, config.nodeName()));
        LOG.info(
                "the node's ports are reached at {}; bridge networks on {} ({})",
                address,
                s.bridgeName(),
                s.bridgeSubnet());
        return new AgentNetworks(networks, admissions, address);
    }

    /** The Node's first InternalIP (else ExternalIP) that is an IP literal; loopback when it has none. */
    private static String nodeAddress(KubernetesClient client, String nodeName) {
        try {
            NodeView node = client == null ? null : NodeView.read(client, nodeName);
            for (String a : node == null ? List.<String>of() : node.dialled()) {
                try {
                    return InetAddress.ofLiteral(a).getHostAddress();
                } catch (IllegalArgumentException notALiteral) {
                    // a name: not looked up here
                }
            }
        } catch (KubernetesClientException e) {
            LOG.warn("cannot read node {}'s addresses: {}; its ports are told as 127.0.0.1", nodeName, e.getMessage());
        }
        return "127.0.0.1";
    }

    @Override
    public String nodeAddress() {
        return nodeAddress;
    }

    @Override
    public Map<String, Integer> hostPorts(AllocId id) {
        return admissions.hostPorts(id);
    }

    @Override
    public Attached setUp(AllocId id, dev.drover.api.v1alpha1.NetworkMode mode, List<NetworkStatus.PortStatus> ports)
            throws IOException {
        List<PortMapping> mappings = ports.stream()
                .map(p -> new PortMapping(p.name(), p.hostPort(), p.to()))
                .toList();
        AttachedNetwork made = networks.setUp(id.key(), NetworkMode.parse(mode.apiName()), mappings);
        return attached(made);
    }

    @Override
    public Attached reattach(AllocId id, String stored) throws IOException {
        AttachedNetwork made = JSON.readValue(stored, AttachedNetwork.class);
        networks.check(made);
        return attached(made);
    }

    @Override
    public void tearDown(AllocId id, String stored) {
        try {
            List<String> failed = networks.tearDown(JSON.readValue(stored, AttachedNetwork.class));
            if (!failed.isEmpty()) {
                LOG.warn("allocation {}: tearing down its network left: {}", id, String.join("; ", failed));
            }
        } catch (IOException e) {
            LOG.warn("allocation {}: its stored network cannot be read ({}); nothing torn down", id, e.getMessage());
        }
    }

    private static Attached attached(AttachedNetwork made) throws IOException {
        return new Attached(
                Optional.ofNullable(made.netns()).map(Path::of).orElse(null), made.ip(), JSON.writeValueAsString(made));
    }
}
