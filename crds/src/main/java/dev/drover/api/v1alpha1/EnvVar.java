package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** One variable added to a task's environment. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!(has(self.value) && has(self.valueFrom))", message = "give value or valueFrom, not both")
public class EnvVar {

    @Required
    @Pattern(Names.ENV_NAME)
    @JsonPropertyDescription("The variable's name, a shell identifier, unique in the task.")
    private String name;

    @JsonPropertyDescription("The variable's value; give value or valueFrom, not both.")
    private String value;

    @JsonPropertyDescription(
            "A Secret's or ConfigMap's key the value is read from, with the allocation's ServiceAccount.")
    private EnvVarSource valueFrom;

    public EnvVar() {}

    public EnvVar(String name, EnvVarSource valueFrom) {
        this.name = name;
        this.valueFrom = valueFrom;
    }

    public EnvVar(String name, String value) {
        this.name = name;
        this.value = value;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getValue() {
        return value;
    }

    public void setValue(String value) {
        this.value = value;
    }

    /** A Secret's or ConfigMap's key the value is read from, instead of {@link #getValue()}. */
    public EnvVarSource getValueFrom() {
        return valueFrom;
    }

    public void setValueFrom(EnvVarSource valueFrom) {
        this.valueFrom = valueFrom;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EnvVar e
                && Objects.equals(name, e.name)
                && Objects.equals(value, e.value)
                && Objects.equals(valueFrom, e.valueFrom);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, value, valueFrom);
    }
}
