package dev.drover.controller.services;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.ServicePublication;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * What the controller tells the {@link EndpointSlicePublisher} of its allocations: each status it builds (the
 * allocation's endpoints, ready as its {@code Ready} condition, terminating once it is stopped, deleted or over),
 * that one is gone, and that every allocation is known after the agent's start.
 */
public final class AllocationEndpoints {

    /** An agent that publishes into no Service (no API server, or tests). */
    public static final AllocationEndpoints NONE = new AllocationEndpoints(null);

    private final EndpointSlicePublisher publisher;

    public AllocationEndpoints(EndpointSlicePublisher publisher) {
        this.publisher = publisher;
    }

    /**
     * {@code owner} (the API server's copy, its metadata) publishes into {@code services}, is {@code stopping} (desired
     * Stop, or deleted) or not, and has the status {@code status} now.
     */
    public void statusBuilt(
            Allocation owner, List<ServicePublication> services, boolean stopping, AllocationStatus status) {
        if (publisher == null || owner == null || owner.getMetadata() == null) {
            return;
        }
        boolean over = status.getClientStatus() == ClientStatus.Complete
                || status.getClientStatus() == ClientStatus.Failed
                || status.getClientStatus() == ClientStatus.Lost;
        if (services.isEmpty() || over) {
            publisher.publish(Publications.ref(owner), List.of());
            return;
        }
        AllocationSpec spec = new AllocationSpec();
        spec.setServices(services);
        Allocation view = new Allocation();
        view.setMetadata(owner.getMetadata());
        view.setSpec(spec);
        view.setStatus(status);
        publisher.publish(Publications.ref(owner), Publications.endpoints(view, ready(status), stopping));
    }

    /** {@code a} is deleted, or moved to another node: it is no endpoint of this node's. */
    public void gone(Allocation a) {
        if (publisher != null && a != null && a.getMetadata() != null) {
            publisher.publish(Publications.ref(a), List.of());
        }
    }

    /** Every allocation of the node has been told: slices none of them claims may go. */
    public void allocationsKnown() {
        if (publisher != null) {
            publisher.allocationsKnown();
        }
    }

    private static boolean ready(AllocationStatus status) {
        if (status.getConditions() == null) {
            return false;
        }
        for (Condition c : status.getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }
}
