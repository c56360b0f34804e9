package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/**
 * A request for {@code count} device instances matching {@code name}:
 * {@code <type>}, {@code <vendor>/<type>} or {@code <vendor>/<type>/<model>}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.count) || self.count >= 1", message = "device count must be at least 1")
public class DeviceRequest {

    @Required
    @Pattern(Names.DEVICE_NAME)
    @JsonPropertyDescription("The device kind: <type>, <vendor>/<type> or <vendor>/<type>/<model>, e.g. nvidia/gpu.")
    private String name;

    @Min(1)
    @JsonPropertyDescription("How many instances of the device the task needs, at least 1; 1 when not given.")
    private Integer count;

    public DeviceRequest() {}

    public DeviceRequest(String name, Integer count) {
        this.name = name;
        this.count = count;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Integer getCount() {
        return count;
    }

    public void setCount(Integer count) {
        this.count = count;
    }

    /** {@code count}, 1 when not given. */
    @JsonIgnore
    public int effectiveCount() {
        return count == null ? 1 : count;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeviceRequest d && Objects.equals(name, d.name) && Objects.equals(count, d.count);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, count);
    }
}
