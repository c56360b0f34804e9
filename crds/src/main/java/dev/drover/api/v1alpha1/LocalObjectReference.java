package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** An object of the allocation's namespace, by name alone, as a Pod's {@code imagePullSecrets} name Secrets. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LocalObjectReference {

    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @JsonPropertyDescription("The object's name, in the allocation's namespace.")
    private String name;

    public LocalObjectReference() {}

    public LocalObjectReference(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LocalObjectReference r && Objects.equals(name, r.name);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(name);
    }

    @Override
    public String toString() {
        return "LocalObjectReference[name=" + name + "]";
    }
}
