package dev.drover.httpapi;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a caller may take a previous allocation's disk for a successor: the successor must exist with the uid
 * named, name the previous allocation as its {@code previousAllocation}, and be bound ({@code spec.nodeName}) to
 * the node the caller's token is bound to. So only the agent of the successor's node, showing its node-bound peer
 * token, can claim a disk, and only for an allocation that replaces it; a user's token (bound to no node) cannot.
 * The successor is read from the API server, never taken from the request.
 */
public final class Successors {

    private final KubernetesClient client;

    public Successors(KubernetesClient client) {
        this.client = client;
    }

    /** Empty when {@code caller} may claim the disk of {@code previous} for {@code successor}; else why not. */
    Optional<KubernetesAuth.Decision.Refused> check(
            KubernetesAuth.Caller caller, AllocId previous, ApiRequest.Successor successor) {
        String who = "allocation " + previous.namespace() + "/" + successor.name() + " (uid " + successor.uid() + ")";
        if (caller.node() == null) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    403,
                    "only an agent can take a disk for a successor: its token must be bound to the successor's node"
                            + " (a ServiceAccount token of a pod, audience drover.dev/agent); user \"" + caller.user()
                            + "\"'s is bound to none"));
        }
        Allocation a;
        try {
            a = client.resources(Allocation.class)
                    .inNamespace(previous.namespace())
                    .withName(successor.name())
                    .get();
        } catch (KubernetesClientException e) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    503, "the agent could not read " + who + " from the API server: " + e.getMessage()));
        }
        if (a == null || !successor.uid().equals(a.getMetadata().getUid())) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    403, who + " does not exist (an allocation of that name with another uid is another one)"));
        }
        String replaces = a.getSpec() == null ? null : a.getSpec().getPreviousAllocation();
        if (!previous.name().equals(replaces)) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    403,
                    who + " does not replace " + previous.name() + " (its spec.previousAllocation is "
                            + (replaces == null ? "not set" : "\"" + replaces + "\"") + ")"));
        }
        String bound = a.getSpec().getNodeName();
        if (!Objects.equals(bound, caller.node())) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    403,
                    who + " is bound to node " + (bound == null ? "(none)" : "\"" + bound + "\"") + ", not to node \""
                            + caller.node() + "\" that the caller's token is bound to"));
        }
        return Optional.empty();
    }
}
