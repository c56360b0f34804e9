package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import java.util.Objects;

/** Puts a task before, beside or after the main tasks. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Lifecycle {

    @Required
    @JsonPropertyDescription(
            "When the task runs: Prestart (before the main tasks), Poststart (once they run) or Poststop (after every other task).")
    private LifecycleHook hook;

    @JsonPropertyDescription("Whether the task keeps running beside the main tasks instead of running to completion.")
    private Boolean sidecar;

    public Lifecycle() {}

    public Lifecycle(LifecycleHook hook, Boolean sidecar) {
        this.hook = hook;
        this.sidecar = sidecar;
    }

    public LifecycleHook getHook() {
        return hook;
    }

    public void setHook(LifecycleHook hook) {
        this.hook = hook;
    }

    public Boolean getSidecar() {
        return sidecar;
    }

    public void setSidecar(Boolean sidecar) {
        this.sidecar = sidecar;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Lifecycle l && hook == l.hook && Objects.equals(sidecar, l.sidecar);
    }

    @Override
    public int hashCode() {
        return Objects.hash(hook, sidecar);
    }
}
