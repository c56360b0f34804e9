package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Which network an allocation's tasks share; written in lower case, as Nomad writes network modes. */
public enum NetworkMode {
    /** The node's own network, as raw_exec tasks always have: ports are the node's ports. */
    @JsonProperty("host")
    HOST,
    /** A network namespace of the allocation's own with only loopback: nothing reaches in or out. */
    @JsonProperty("none")
    NONE,
    /**
     * A network namespace of the allocation's own, shared by its tasks as a Pod's containers share one, with an
     * address on the agent's bridge; its ports are mapped from the node's.
     */
    @JsonProperty("bridge")
    BRIDGE;

    /** The name as the API writes it: {@code host}, {@code none} or {@code bridge}. */
    public String apiName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
