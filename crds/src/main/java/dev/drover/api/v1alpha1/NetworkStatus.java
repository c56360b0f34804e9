package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import java.util.Objects;

/**
 * The network the agent gave the allocation: its mode, its address and its ports as the node maps them.
 *
 * @see Network
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NetworkStatus {

    /** A port as the agent holds it: the node's port and the one inside the allocation's network. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PortStatus(
            @JsonPropertyDescription("The port's name, as spec.network.ports names it.")
            String name,

            @JsonPropertyDescription("The node's port the agent holds for it.")
            Integer hostPort,

            @JsonPropertyDescription("The port the tasks listen on: inside a bridge network, or the host port.")
            Integer to) {}

    @JsonPropertyDescription("host, none or bridge.")
    private NetworkMode mode;

    @JsonPropertyDescription("The allocation's address: its own on the agent's bridge (bridge), or the node's (host);"
            + " absent for none.")
    private String ip;

    @JsonPropertyDescription("Each port with the host port it holds.")
    private List<PortStatus> ports;

    public NetworkStatus() {}

    public NetworkStatus(NetworkMode mode, String ip, List<PortStatus> ports) {
        this.mode = mode;
        this.ip = ip;
        this.ports = ports;
    }

    public NetworkMode getMode() {
        return mode;
    }

    public void setMode(NetworkMode mode) {
        this.mode = mode;
    }

    public String getIp() {
        return ip;
    }

    public void setIp(String ip) {
        this.ip = ip;
    }

    public List<PortStatus> getPorts() {
        return ports;
    }

    public void setPorts(List<PortStatus> ports) {
        this.ports = ports;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NetworkStatus n
                && mode == n.mode
                && Objects.equals(ip, n.ip)
                && Objects.equals(ports, n.ports);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, ip, ports);
    }
}
