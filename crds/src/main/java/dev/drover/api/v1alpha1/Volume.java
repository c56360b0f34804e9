package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/**
 * A volume the allocation's tasks may mount ({@code volumeMounts} in a task's config): one of the host volumes the
 * node's agent config names ({@code hostVolumes}), admitted only where that agent has it and lets the allocation's
 * namespace use it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Volume {

    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS1123_LABEL)
    @JsonPropertyDescription("The volume's name within the allocation, which a task's volumeMounts[].volume names.")
    private String name;

    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS1123_LABEL)
    @JsonPropertyDescription("The host volume of the node's agent config (hostVolumes) this volume is.")
    private String hostVolume;

    public Volume() {}

    public Volume(String name, String hostVolume) {
        this.name = name;
        this.hostVolume = hostVolume;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    /** The host volume of the node's agent config this volume is. */
    public String getHostVolume() {
        return hostVolume;
    }

    public void setHostVolume(String hostVolume) {
        this.hostVolume = hostVolume;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Volume v && Objects.equals(name, v.name) && Objects.equals(hostVolume, v.hostVolume);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, hostVolume);
    }

    @Override
    public String toString() {
        return "Volume[" + name + " = hostVolume " + hostVolume + "]";
    }
}
