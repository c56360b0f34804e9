package dev.drover.controller;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.ServicePublication;
import java.util.List;

/**
 * An allocation's {@code spec.services} as last seen, and whether it is being stopped (desired Stop, or deleted): all
 * the controller keeps of its spec for its Services' endpoints ({@link TrackedAllocation#publishes()}).
 */
record Publishes(List<ServicePublication> services, boolean stopping) {

    static final Publishes NONE = new Publishes(List.of(), false);

    Publishes {
        services = List.copyOf(services);
    }

    static Publishes of(Allocation a) {
        if (a == null || a.getSpec() == null) {
            return NONE;
        }
        boolean stopping = a.getSpec().effectiveDesiredStatus() == DesiredStatus.Stop
                || (a.getMetadata() != null && a.getMetadata().getDeletionTimestamp() != null);
        List<ServicePublication> services = a.getSpec().serviceList();
        return services.isEmpty() && !stopping ? NONE : new Publishes(services, stopping);
    }
}
