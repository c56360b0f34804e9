package dev.drover.agent;

import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import dev.drover.sharing.NodeSharing;
import java.util.Optional;

/**
 * How the agent shares its node with the kubelet's Pods (docs/install.md, "Sharing a node with Pods"):
 * {@code nodeSharing} and the agent's own Pod, which the DaemonSet names through the downward API.
 *
 * @param mode         {@code resize} or {@code dedicated}; empty: {@code resize} where the API server is 1.35 or later
 *                     and the agent knows its Pod, else {@code dedicated}
 * @param podName      the agent's Pod ({@code POD_NAME}); empty when the agent runs outside a Pod
 * @param podNamespace its namespace ({@code POD_NAMESPACE})
 */
public record NodeSharingSettings(Optional<NodeSharing> mode, Optional<String> podName, Optional<String> podNamespace) {

    /** Outside a Pod, chosen by the API server's version. */
    public static final NodeSharingSettings DEFAULT =
            new NodeSharingSettings(Optional.empty(), Optional.empty(), Optional.empty());

    /** The agent's Pod as {@code namespace/name}, when it runs in one. */
    public Optional<String> pod() {
        return podName.flatMap(n -> podNamespace.map(ns -> ns + "/" + n));
    }

    static NodeSharingSettings load(AgentSettings s) throws ConfigException {
        Optional<NodeSharing> mode = Optional.empty();
        Optional<String> text = s.text("nodeSharing", "--node-sharing", "DROVER_NODE_SHARING");
        if (text.isPresent()) {
            try {
                mode = Optional.of(NodeSharing.parse(text.get()));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("nodeSharing " + UserText.quote(text.get()) + " is " + e.getMessage());
            }
        }
        Optional<String> name = s.text("podName", "--pod-name", "POD_NAME");
        Optional<String> namespace = s.text("podNamespace", "--pod-namespace", "POD_NAMESPACE");
        if (name.isPresent() && !Names.isSubdomain(name.get())) {
            throw new ConfigException("podName " + UserText.quote(name.get()) + " is not a Pod's name");
        }
        if (namespace.isPresent() && !Names.isLabel(namespace.get())) {
            throw new ConfigException("podNamespace " + UserText.quote(namespace.get()) + " is not a namespace");
        }
        if (name.isPresent() != namespace.isPresent()) {
            throw new ConfigException("podName and podNamespace name the agent's Pod together: give both or neither"
                    + " (the DaemonSet sets POD_NAME and POD_NAMESPACE from metadata.name and metadata.namespace)");
        }
        if (mode.equals(Optional.of(NodeSharing.RESIZE)) && name.isEmpty()) {
            throw new ConfigException("nodeSharing resize books the node's CPU and memory on the agent's own Pod,"
                    + " which it is not told: give --pod-name and --pod-namespace (POD_NAME and POD_NAMESPACE, as the"
                    + " chart sets them), or nodeSharing dedicated");
        }
        return new NodeSharingSettings(mode, name, namespace);
    }
}
