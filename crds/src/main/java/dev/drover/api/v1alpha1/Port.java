package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Locale;
import java.util.Objects;

/**
 * A port of the allocation, as Nomad's {@code network { port "http" { static = 8080, to = 80 } }}: a host port of the
 * node, {@code static} or picked by the agent from its dynamic range, and the port inside a bridge network it maps to.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Port {

    /** A port name as Kubernetes names container ports (IANA service names): at most 15, one letter at least. */
    public static final String NAME_PATTERN = "^[a-z0-9]+(-[a-z0-9]+)*$";

    public static final int MAX_NAME = 15;

    @Required
    @Size(min = 1, max = MAX_NAME)
    @Pattern(NAME_PATTERN)
    @ValidationRule(value = "self.matches('[a-z]')", message = "a port name needs at least one letter")
    @JsonPropertyDescription("The port's name (lower-case letters, digits and '-', at most 15), which checks and"
            + " services name and the tasks' DROVER_PORT_<NAME> variables carry (upper-cased, '-' as '_').")
    private String name;

    @Min(1)
    @Max(65535)
    @JsonProperty("static")
    @JsonPropertyDescription("The node's port to take; absent: the agent picks a free one from its dynamicPorts"
            + " range. A static port another allocation of the node holds is refused (PortConflict).")
    private Integer staticPort;

    @Min(1)
    @Max(65535)
    @JsonPropertyDescription("bridge networks only: the port inside the allocation's network the host port maps to,"
            + " and the one its tasks listen on; the host port when not given.")
    private Integer to;

    public Port() {}

    public Port(String name, Integer staticPort, Integer to) {
        this.name = name;
        this.staticPort = staticPort;
        this.to = to;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    /** The static host port, or null for a dynamic one. */
    @JsonProperty("static")
    public Integer getStatic() {
        return staticPort;
    }

    @JsonProperty("static")
    public void setStatic(Integer staticPort) {
        this.staticPort = staticPort;
    }

    public Integer getTo() {
        return to;
    }

    public void setTo(Integer to) {
        this.to = to;
    }

    /** Whether {@code name} is a valid port name. */
    public static boolean isName(String name) {
        return name != null
                && name.length() <= MAX_NAME
                && name.matches(NAME_PATTERN)
                && name.chars().anyMatch(c -> c >= 'a' && c <= 'z');
    }

    /** The name as environment variables carry it: upper-cased, '-' as '_'. */
    @JsonIgnore
    public static String envName(String name) {
        return name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Port p
                && Objects.equals(name, p.name)
                && Objects.equals(staticPort, p.staticPort)
                && Objects.equals(to, p.to);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, staticPort, to);
    }

    @Override
    public String toString() {
        return "Port[" + name + (staticPort == null ? " dynamic" : " static " + staticPort)
                + (to == null ? "" : " to " + to) + "]";
    }
}
