package dev.drover.gateway;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.Subresource;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The discovery documents of group {@code agent.drover.dev}, which the API server and kubectl read to learn what the
 * group serves: the {@code APIGroup} and the {@code APIResourceList} of version {@code v1alpha1}.
 */
final class Discovery {

    private Discovery() {}

    /** The document at {@code path}, if it is a discovery path. */
    static Optional<byte[]> document(String path) {
        Object doc = switch (path) {
            case "/apis" -> Map.of("kind", "APIGroupList", "apiVersion", "v1", "groups", List.of(group()));
            case "/apis/" + AgentProtocol.GROUP -> group();
            case AgentProtocol.GATEWAY_PREFIX -> resources();
            default -> null;
        };
        if (doc == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(GatewayStatus.JSON.writeValueAsBytes(doc));
        } catch (IOException e) {
            throw new IllegalStateException("maps of strings always serialize", e);
        }
    }

    private static Map<String, Object> group() {
        Map<String, String> version = Map.of(
                "groupVersion", AgentProtocol.GROUP + "/" + AgentProtocol.VERSION, "version", AgentProtocol.VERSION);
        return Map.of(
                "kind",
                "APIGroup",
                "apiVersion",
                "v1",
                "name",
                AgentProtocol.GROUP,
                "versions",
                List.of(version),
                "preferredVersion",
                version);
    }

    private static Map<String, Object> resources() {
        return Map.of(
                "kind",
                "APIResourceList",
                "apiVersion",
                "v1",
                "groupVersion",
                AgentProtocol.GROUP + "/" + AgentProtocol.VERSION,
                "resources",
                Arrays.stream(Subresource.values())
                        .map(s -> Map.of(
                                "name",
                                "allocations/" + s.apiName(),
                                "singularName",
                                "",
                                "namespaced",
                                true,
                                "kind",
                                "Allocation",
                                "verbs",
                                s.discoveryVerbs()))
                        .toList());
    }
}
