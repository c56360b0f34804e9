package dev.drover.httpapi;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.kube.NodeView;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a caller may take a previous allocation's disk for a successor: the successor must exist with the uid
 * named, name the previous allocation as its {@code previousAllocation}, and be bound ({@code spec.nodeName}) to
 * the node the caller's token is bound to, and the connection must present the certificate that node's agent
 * publishes on its Node. So only the agent of the successor's node, showing its node-bound peer token and its own
 * certificate, can claim a disk, and only for an allocation that replaces it; a user's token (bound to no node)
 * cannot, nor can an agent that was shown another node's token. The successor and the Node are read from the API
 * server, never taken from the request.
 */
public final class Successors {

    private final KubernetesClient client;

    public Successors(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Empty when {@code caller} may claim the disk of {@code previous} for {@code successor} over a connection that
     * presented {@code clientCertificates} (null or empty: none); else why not.
     */
    Optional<KubernetesAuth.Decision.Refused> check(
            KubernetesAuth.Caller caller,
            AllocId previous,
            ApiRequest.Successor successor,
            X509Certificate[] clientCertificates) {
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
        return presentedBy(caller.node(), clientCertificates);
    }

    /**
     * Empty when the connection presented the certificate the agent of {@code node} publishes on its Node: the token
     * alone is not enough, as the agent it was shown to (the previous node's, when this node's agent migrated a disk
     * from it) could replay it here within its lifetime, to take disks bound for {@code node}.
     */
    private Optional<KubernetesAuth.Decision.Refused> presentedBy(String node, X509Certificate[] clientCertificates) {
        NodeView n;
        try {
            n = NodeView.read(client, node);
        } catch (KubernetesClientException e) {
            return Optional.of(new KubernetesAuth.Decision.Refused(
                    503, "the agent could not read node \"" + node + "\" from the API server: " + e.getMessage()));
        }
        String published =
                n == null || n.annotations() == null ? null : n.annotations().get(AgentProtocol.CERTIFICATE_ANNOTATION);
        String shown = null;
        if (clientCertificates != null && clientCertificates.length > 0) {
            try {
                shown = Pinning.fingerprint(clientCertificates[0]);
            } catch (CertificateException e) {
                shown = "unreadable";
            }
        }
        if (published != null && published.equalsIgnoreCase(shown)) {
            return Optional.empty();
        }
        return Optional.of(new KubernetesAuth.Decision.Refused(
                403,
                "a disk is taken only over a connection that presents the certificate the agent of node \"" + node
                        + "\" publishes on its Node (" + AgentProtocol.CERTIFICATE_ANNOTATION + "): "
                        + (published == null
                                ? "that node publishes none"
                                : shown == null ? "this connection presented none" : "this one is another")
                        + "; a token bound to the node alone is not enough"));
    }
}
