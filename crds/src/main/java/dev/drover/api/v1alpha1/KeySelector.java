package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/**
 * One key of a Secret or ConfigMap in the allocation's namespace, as a Pod's {@code secretKeyRef} and
 * {@code configMapKeyRef} name it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KeySelector {

    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @JsonPropertyDescription("The object's name, in the allocation's namespace.")
    private String name;

    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DATA_KEY)
    @JsonPropertyDescription("The key whose value is read.")
    private String key;

    @JsonPropertyDescription(
            "Whether a missing object or key is skipped instead of failing the task; false when not given.")
    private Boolean optional;

    public KeySelector() {}

    public KeySelector(String name, String key, Boolean optional) {
        this.name = name;
        this.key = key;
        this.optional = optional;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getKey() {
        return key;
    }

    public void setKey(String key) {
        this.key = key;
    }

    /** Whether a missing object or key is skipped instead of failing the task ({@code false} when not given). */
    public Boolean getOptional() {
        return optional;
    }

    public void setOptional(Boolean optional) {
        this.optional = optional;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeySelector k
                && Objects.equals(name, k.name)
                && Objects.equals(key, k.key)
                && Objects.equals(optional, k.optional);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, key, optional);
    }
}
