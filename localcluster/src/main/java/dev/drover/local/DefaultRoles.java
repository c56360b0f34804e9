package dev.drover.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The roles and bindings a real API server bootstraps that matter here, with their real rules and subjects:
 * {@code cluster-admin} for {@code system:masters}; {@code system:discovery} (discovery, OpenAPI, health and version
 * paths) and {@code system:basic-user} (self reviews) for every authenticated user; {@code system:public-info-viewer}
 * (health and version) for everyone, signed in or not; and the Role {@code kube-system/extension-apiserver-authentication-reader}
 * (the request-header settings aggregated API servers read). Stored at start, so kubectl lists them.
 */
final class DefaultRoles {

    private static final ObjectMapper JSON = NestingDepth.mapper();

    private DefaultRoles() {}

    static void create(ObjectStore store) {
        ObjectNode admin = role("cluster-admin");
        rule(admin, List.of("*"), List.of("*"), List.of("*"));
        nonResource(admin, List.of("*"), List.of("*"));
        ObjectNode discovery = role("system:discovery");
        nonResource(
                discovery,
                List.of("get"),
                List.of(
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/"));
        ObjectNode publicInfo = role("system:public-info-viewer");
        nonResource(publicInfo, List.of("get"), List.of("/healthz", "/livez", "/readyz", "/version", "/version/"));
        ObjectNode basicUser = role("system:basic-user");
        rule(
                basicUser,
                List.of("create"),
                List.of("authorization.k8s.io"),
                List.of("selfsubjectaccessreviews", "selfsubjectrulesreviews"));
        rule(basicUser, List.of("create"), List.of("authentication.k8s.io"), List.of("selfsubjectreviews"));
        for (ObjectNode role : List.of(admin, discovery, publicInfo, basicUser)) {
            store.create(Rbac.CLUSTER_ROLES, null, role, false);
        }
        store.create(Rbac.CLUSTER_ROLE_BINDINGS, null, binding("cluster-admin", "system:masters"), false);
        store.create(Rbac.CLUSTER_ROLE_BINDINGS, null, binding("system:discovery", "system:authenticated"), false);
        store.create(Rbac.CLUSTER_ROLE_BINDINGS, null, binding("system:basic-user", "system:authenticated"), false);
        store.create(
                Rbac.CLUSTER_ROLE_BINDINGS,
                null,
                binding("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
                false);
        store.create(Rbac.ROLES, "kube-system", authenticationReader(), false);
    }

    /** What kube-apiserver bootstraps for aggregated API servers: reading the one ConfigMap of request-header settings. */
    private static ObjectNode authenticationReader() {
        ObjectNode role =
                JSON.createObjectNode().put("apiVersion", Rbac.GROUP + "/v1").put("kind", "Role");
        bootstrapped(role.putObject("metadata")
                .put("name", "extension-apiserver-authentication-reader")
                .put("namespace", "kube-system"));
        ObjectNode rule = role.putArray("rules").addObject();
        rule.putArray("apiGroups").add("");
        rule.putArray("resources").add("configmaps");
        rule.putArray("resourceNames").add("extension-apiserver-authentication");
        rule.putArray("verbs").add("get").add("list").add("watch");
        return role;
    }

    private static ObjectNode role(String name) {
        ObjectNode role =
                JSON.createObjectNode().put("apiVersion", Rbac.GROUP + "/v1").put("kind", "ClusterRole");
        bootstrapped(role.putObject("metadata").put("name", name));
        role.putArray("rules");
        return role;
    }

    private static void bootstrapped(ObjectNode metadata) {
        metadata.putObject("labels").put("kubernetes.io/bootstrapping", "rbac-defaults");
        metadata.putObject("annotations").put("rbac.authorization.kubernetes.io/autoupdate", "true");
    }

    private static void rule(ObjectNode role, List<String> verbs, List<String> groups, List<String> resources) {
        ObjectNode rule = ((ArrayNode) role.get("rules")).addObject();
        groups.forEach(rule.putArray("apiGroups")::add);
        resources.forEach(rule.putArray("resources")::add);
        verbs.forEach(rule.putArray("verbs")::add);
    }

    private static void nonResource(ObjectNode role, List<String> verbs, List<String> urls) {
        ObjectNode rule = ((ArrayNode) role.get("rules")).addObject();
        urls.forEach(rule.putArray("nonResourceURLs")::add);
        verbs.forEach(rule.putArray("verbs")::add);
    }

    private static ObjectNode binding(String role, String... groups) {
        ObjectNode binding =
                JSON.createObjectNode().put("apiVersion", Rbac.GROUP + "/v1").put("kind", "ClusterRoleBinding");
        bootstrapped(binding.putObject("metadata").put("name", role));
        binding.putObject("roleRef")
                .put("apiGroup", Rbac.GROUP)
                .put("kind", "ClusterRole")
                .put("name", role);
        ArrayNode subjects = binding.putArray("subjects");
        for (String g : groups) {
            subjects.addObject()
                    .put("apiGroup", Rbac.GROUP)
                    .put("kind", "Group")
                    .put("name", g);
        }
        return binding;
    }
}
