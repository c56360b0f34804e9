package dev.drover.cli;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMeta;

/**
 * An allocation as the plugin shows it: its metadata, spec and status, each possibly null. Not an {@link Allocation}:
 * making one (a fabric8 CustomResource) pluralizes its kind with a few dozen regular expressions and reads its
 * annotations, a sixth of a second of a command's start.
 */
record AllocationParts(ObjectMeta metadata, AllocationSpec spec, AllocationStatus status) {

    static AllocationParts of(Allocation a) {
        return a == null ? null : new AllocationParts(a.getMetadata(), a.getSpec(), a.getStatus());
    }

    /** The status's Ready condition; null when it has none. */
    static Condition readyCondition(AllocationStatus status) {
        return status.getConditions() == null
                ? null
                : status.getConditions().stream()
                        .filter(c -> c != null && "Ready".equals(c.getType()))
                        .findFirst()
                        .orElse(null);
    }
}
