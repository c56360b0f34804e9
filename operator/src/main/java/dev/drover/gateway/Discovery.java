package dev.drover.gateway;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The discovery documents of group {@code agent.drover.dev}, which the API server and kubectl read to learn what the
 * group serves: the {@code APIGroup} and the {@code APIResourceList} of version {@code v1alpha1}.
 */
final class Discovery {

    static final List<String> SUBRESOURCES = List.of("log", "stats", "snapshot", "signal", "exec");

    private Discovery() {}

    /** The document at {@code path}, if it is a discovery path. */
    static Optional<byte[]> document(String path) {
        Object doc = switch (path) {
            case "/apis" -> Map.of("kind", "APIGroupList", "apiVersion", "v1", "groups", List.of(group()));
            case "/apis/" + GatewayRequest.GROUP -> group();
            case GatewayRequest.PREFIX -> resources();
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
                "groupVersion", GatewayRequest.GROUP + "/" + GatewayRequest.VERSION, "version", GatewayRequest.VERSION);
        return Map.of(
                "kind",
                "APIGroup",
                "apiVersion",
                "v1",
                "name",
                GatewayRequest.GROUP,
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
                GatewayRequest.GROUP + "/" + GatewayRequest.VERSION,
                "resources",
                SUBRESOURCES.stream()
                        .map(s -> Map.of(
                                "name",
                                "allocations/" + s,
                                "singularName",
                                "",
                                "namespaced",
                                true,
                                "kind",
                                "Allocation",
                                "verbs",
                                // a signal is a POST, which kube-apiserver authorizes as create; an exec is a
                                // WebSocket GET that kube-apiserver lets through for get, then checked for create
                                switch (s) {
                                    case "signal" -> List.of("create");
                                    case "exec" -> List.of("create", "get");
                                    default -> List.of("get");
                                }))
                        .toList());
    }
}
