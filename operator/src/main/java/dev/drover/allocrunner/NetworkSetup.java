package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.state.AllocId;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The agent's side of allocations' networks, which an alloc runner's {@link NetworkHook} drives: the host ports
 * admission gave an allocation, and the network namespaces of {@code none} and {@code bridge} networks, set up
 * before its first task and torn down after its last.
 */
public interface NetworkSetup {

    /**
     * A network set up for an allocation.
     *
     * @param namespace the network namespace its tasks join
     * @param ip        its address (bridge), or null
     * @param stored    what the agent needs to check or tear it down after a restart, kept in the state store
     */
    record Attached(Path namespace, String ip, String stored) {}

    /** Where the node's ports are reached: the Node's address. */
    String nodeAddress();

    /** The host ports admission gave {@code id}, by port name; empty when none. */
    Map<String, Integer> hostPorts(AllocId id);

    /**
     * Sets up a {@code none} or {@code bridge} network for {@code id}, its {@code ports} mapped from the node's; throws
     * with a message naming what failed (a CNI plugin and its error), having removed what it made.
     */
    Attached setUp(AllocId id, NetworkMode mode, List<NetworkStatus.PortStatus> ports) throws Exception;

    /** After an agent restart: the network {@code stored} describes, checked to be whole; throws when it is not. */
    Attached reattach(AllocId id, String stored) throws Exception;

    /** Tears down the network {@code stored} describes; best effort, harmless when it is gone. */
    void tearDown(AllocId id, String stored);

    /** An agent that gives allocations no networks of their own: host mode only. */
    NetworkSetup HOST_ONLY = new NetworkSetup() {
        @Override
        public String nodeAddress() {
            return "127.0.0.1";
        }

        @Override
        public Map<String, Integer> hostPorts(AllocId id) {
            return Map.of();
        }

        @Override
        public Attached setUp(AllocId id, NetworkMode mode, List<NetworkStatus.PortStatus> ports) {
            throw new IllegalStateException("this agent sets up no " + mode.apiName() + " networks");
        }

        @Override
        public Attached reattach(AllocId id, String stored) {
            throw new IllegalStateException("this agent sets up no networks");
        }

        @Override
        public void tearDown(AllocId id, String stored) {}
    };
}
