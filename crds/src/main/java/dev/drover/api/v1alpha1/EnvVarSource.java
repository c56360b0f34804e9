package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** Where a variable's value comes from, read with the allocation's ServiceAccount: exactly one of the two. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.secretKeyRef) != has(self.configMapKeyRef)",
        message = "valueFrom needs exactly one of secretKeyRef and configMapKeyRef")
public class EnvVarSource {

    @JsonPropertyDescription("A key of a Secret of the allocation's namespace.")
    private KeySelector secretKeyRef;

    @JsonPropertyDescription("A key of a ConfigMap of the allocation's namespace.")
    private KeySelector configMapKeyRef;

    public EnvVarSource() {}

    public static EnvVarSource secret(String name, String key) {
        EnvVarSource s = new EnvVarSource();
        s.secretKeyRef = new KeySelector(name, key, null);
        return s;
    }

    public static EnvVarSource configMap(String name, String key) {
        EnvVarSource s = new EnvVarSource();
        s.configMapKeyRef = new KeySelector(name, key, null);
        return s;
    }

    public KeySelector getSecretKeyRef() {
        return secretKeyRef;
    }

    public void setSecretKeyRef(KeySelector secretKeyRef) {
        this.secretKeyRef = secretKeyRef;
    }

    public KeySelector getConfigMapKeyRef() {
        return configMapKeyRef;
    }

    public void setConfigMapKeyRef(KeySelector configMapKeyRef) {
        this.configMapKeyRef = configMapKeyRef;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EnvVarSource s
                && Objects.equals(secretKeyRef, s.secretKeyRef)
                && Objects.equals(configMapKeyRef, s.configMapKeyRef);
    }

    @Override
    public int hashCode() {
        return Objects.hash(secretKeyRef, configMapKeyRef);
    }
}
