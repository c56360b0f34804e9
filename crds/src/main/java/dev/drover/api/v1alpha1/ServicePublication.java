package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/**
 * An entry of {@code spec.services}: the allocation's port {@code port} published into the Kubernetes Service
 * {@code name} of its namespace, as an endpoint of an EndpointSlice its node's agent keeps.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ServicePublication {

    /** The most Services an allocation may publish into. */
    public static final int MAX = 16;

    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS1123_LABEL)
    @JsonPropertyDescription("The Service of the allocation's namespace to publish into (a Service without a"
            + " selector; docs/networking.md).")
    private String name;

    @Required
    @Size(min = 1, max = Port.MAX_NAME)
    @Pattern(Port.NAME_PATTERN)
    @JsonPropertyDescription("The name of the allocation's port (spec.network.ports) the Service reaches.")
    private String port;

    public ServicePublication() {}

    public ServicePublication(String name, String port) {
        this.name = name;
        this.port = port;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getPort() {
        return port;
    }

    public void setPort(String port) {
        this.port = port;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServicePublication s && Objects.equals(name, s.name) && Objects.equals(port, s.port);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, port);
    }

    @Override
    public String toString() {
        return "Service[" + name + " <- port " + port + "]";
    }
}
