package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import java.util.Objects;

/** One variable added to a task's environment. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class EnvVar {

    @Required
    @Pattern(Names.ENV_NAME)
    private String name;

    private String value;

    public EnvVar() {}

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

    @Override
    public boolean equals(Object o) {
        return o instanceof EnvVar e && Objects.equals(name, e.name) && Objects.equals(value, e.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, value);
    }
}
