package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Objects;

/** The network an allocation's tasks share and the node's ports it holds (docs/networking.md). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.ports) || size(self.ports) == 0 || !has(self.mode) || self.mode != 'none'",
        message = "a none network has no ports: nothing reaches it")
@ValidationRule(
        value = "!has(self.ports) || (has(self.mode) && self.mode == 'bridge')"
                + " || self.ports.all(p, !has(p.to) || (has(p.static) && p.to == p.static))",
        message = "to maps a host port into a bridge network; in host mode a task listens on the host port itself")
@ValidationRule(
        value = "!has(self.ports) || self.ports.all(p, !has(p.static)"
                + " || self.ports.filter(q, has(q.static) && q.static == p.static).size() == 1)",
        message = "two ports name the same static port")
public class Network {

    /** The most ports an allocation may hold. */
    public static final int MAX_PORTS = 32;

    @Default("host")
    @JsonPropertyDescription("host (the node's network; the default), none (loopback only) or bridge (a network"
            + " namespace of the allocation's own on the agent's bridge, its ports mapped from the node's).")
    private NetworkMode mode;

    @ListMapKeys("name")
    @Size(max = MAX_PORTS)
    @JsonPropertyDescription("The node's ports the allocation holds, at most 32, keyed by name: static ones, or"
            + " dynamic ones the agent picks; no other allocation of the node holds them while it runs.")
    private List<Port> ports;

    public Network() {}

    public Network(NetworkMode mode, List<Port> ports) {
        this.mode = mode;
        this.ports = ports;
    }

    public NetworkMode getMode() {
        return mode;
    }

    public void setMode(NetworkMode mode) {
        this.mode = mode;
    }

    public List<Port> getPorts() {
        return ports;
    }

    public void setPorts(List<Port> ports) {
        this.ports = ports;
    }

    /** {@code mode}, {@code host} when not given. */
    @JsonIgnore
    public NetworkMode effectiveMode() {
        return mode == null ? NetworkMode.HOST : mode;
    }

    /** The ports, empty when none are given. */
    @JsonIgnore
    public List<Port> portList() {
        return ports == null
                ? List.of()
                : ports.stream().filter(Objects::nonNull).toList();
    }

    /** The port called {@code name}, or null. */
    public Port port(String name) {
        for (Port p : portList()) {
            if (Objects.equals(p.getName(), name)) {
                return p;
            }
        }
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Network n && mode == n.mode && Objects.equals(ports, n.ports);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, ports);
    }
}
