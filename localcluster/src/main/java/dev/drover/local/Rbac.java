package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Kubernetes' RBAC authorizer over the Roles, ClusterRoles and bindings the server stores, with the real semantics:
 * members of {@code system:masters} may do everything (the API server's privileged group); anyone else is allowed a
 * request when a ClusterRoleBinding, or a RoleBinding in the request's namespace, binds a subject that is them (User
 * by name, Group, ServiceAccount as {@code system:serviceaccount:NS:NAME}) to a role with a rule that covers it:
 * verbs, API groups, resources ({@code *}, {@code res/sub}, {@code *}{@code /sub}), {@code resourceNames} (only for
 * requests that name an object) and {@code nonResourceURLs} ({@code *}, exact, or a prefix ending in {@code *}). A
 * ClusterRole with an {@code aggregationRule} has the rules of the ClusterRoles its selectors match, as the
 * aggregation controller would have written them. Nothing else grants: denial is the default.
 */
final class Rbac implements Authorizer {

    static final String GROUP = "rbac.authorization.k8s.io";
    static final ResourceType ROLES = ResourceType.builtIn(GROUP, "v1", "roles", "Role", true);
    static final ResourceType ROLE_BINDINGS = ResourceType.builtIn(GROUP, "v1", "rolebindings", "RoleBinding", true);
    static final ResourceType CLUSTER_ROLES = ResourceType.builtIn(GROUP, "v1", "clusterroles", "ClusterRole", false);
    static final ResourceType CLUSTER_ROLE_BINDINGS =
            ResourceType.builtIn(GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", false);

    private final ObjectStore store;

    Rbac(ObjectStore store) {
        this.store = store;
    }

    @Override
    public Decision authorize(UserInfo user, RequestInfo request) {
        if (user.inGroup("system:masters")) {
            return new Decision(true, "");
        }
        List<String> errors = new ArrayList<>();
        String allowedBy = visit(user, request.namespace(), errors, rule -> covers(rule, request));
        if (allowedBy != null) {
            return new Decision(true, "RBAC: allowed by " + allowedBy);
        }
        return new Decision(false, errors.isEmpty() ? "" : "RBAC: " + aggregate(errors));
    }

    /** Every rule that applies to {@code user} in {@code namespace} (cluster-wide ones included). */
    List<JsonNode> rulesFor(UserInfo user, String namespace) {
        List<JsonNode> rules = new ArrayList<>();
        if (user.inGroup("system:masters")) {
            rules.addAll(clusterAdminRules());
            return rules;
        }
        visit(user, namespace, new ArrayList<>(), rule -> {
            rules.add(rule);
            return false;
        });
        return rules;
    }

    /**
     * Walks the rules bound to {@code user}: cluster-wide first, then {@code namespace}'s; returns the description
     * of the binding whose rule {@code stop} accepts, or null. A binding to a missing role adds an error.
     */
    private String visit(UserInfo user, String namespace, List<String> errors, Predicate<JsonNode> stop) {
        for (ObjectNode binding : store.list(CLUSTER_ROLE_BINDINGS, null).items()) {
            String subject = matchingSubject(binding, user, null);
            if (subject == null) {
                continue;
            }
            String found = visitRole(binding, null, errors, stop);
            if (found != null) {
                return "ClusterRoleBinding \""
                        + binding.path("metadata").path("name").asText() + "\" of " + found + " to " + subject;
            }
        }
        if (namespace != null && !namespace.isEmpty()) {
            for (ObjectNode binding : store.list(ROLE_BINDINGS, namespace).items()) {
                String subject = matchingSubject(binding, user, namespace);
                if (subject == null) {
                    continue;
                }
                String found = visitRole(binding, namespace, errors, stop);
                if (found != null) {
                    return "RoleBinding \""
                            + binding.path("metadata").path("name").asText() + "/" + namespace + "\" of " + found
                            + " to " + subject;
                }
            }
        }
        return null;
    }

    /** "ClusterRole \"x\"" when a rule of the binding's role satisfies {@code stop}, else null. */
    private String visitRole(ObjectNode binding, String namespace, List<String> errors, Predicate<JsonNode> stop) {
        JsonNode ref = binding.path("roleRef");
        String kind = ref.path("kind").asText();
        String name = ref.path("name").asText();
        List<JsonNode> rules = roleRules(kind, name, namespace);
        if (rules == null) {
            errors.add((kind.equals("Role") ? "role" : "clusterrole") + "." + GROUP + " \"" + name + "\" not found");
            return null;
        }
        for (JsonNode rule : rules) {
            if (stop.test(rule)) {
                return kind + " \"" + name + "\"";
            }
        }
        return null;
    }

    /** The rules of a Role (in {@code namespace}) or ClusterRole, or null when there is no such role. */
    List<JsonNode> roleRules(String kind, String name, String namespace) {
        try {
            if (kind.equals("Role")) {
                return namespace == null
                        ? null
                        : list(store.get(ROLES, namespace, name).path("rules"));
            }
            if (!kind.equals("ClusterRole")) {
                return null;
            }
            ObjectNode role = store.get(CLUSTER_ROLES, null, name);
            if (!role.path("aggregationRule").isObject()) {
                return list(role.path("rules"));
            }
            List<JsonNode> rules = new ArrayList<>();
            for (ObjectNode other : store.list(CLUSTER_ROLES, null).items()) {
                if (other != role && aggregated(role.path("aggregationRule"), other)) {
                    rules.addAll(list(other.path("rules")));
                }
            }
            return rules;
        } catch (ApiFront.ApiError notFound) {
            return null;
        }
    }

    private static boolean aggregated(JsonNode aggregationRule, ObjectNode candidate) {
        for (JsonNode selector : aggregationRule.path("clusterRoleSelectors")) {
            if (Selectors.matches(selector, candidate.path("metadata").path("labels"))) {
                return true;
            }
        }
        return false;
    }

    /** How the first subject of {@code binding} that is {@code user} is described, or null when none is. */
    static String matchingSubject(JsonNode binding, UserInfo user, String bindingNamespace) {
        for (JsonNode s : binding.path("subjects")) {
            String kind = s.path("kind").asText();
            String name = s.path("name").asText();
            switch (kind) {
                case "User" -> {
                    if (name.equals(user.username())) {
                        return "User \"" + name + "\"";
                    }
                }
                case "Group" -> {
                    if (user.inGroup(name)) {
                        return "Group \"" + name + "\"";
                    }
                }
                case "ServiceAccount" -> {
                    String ns = s.path("namespace").asText("");
                    if (ns.isEmpty()) {
                        ns = bindingNamespace == null ? "" : bindingNamespace;
                    }
                    if (!ns.isEmpty() && user.username().equals("system:serviceaccount:" + ns + ":" + name)) {
                        return "ServiceAccount \"" + name + "/" + ns + "\"";
                    }
                }
                default -> {
                    // an unknown kind binds nobody
                }
            }
        }
        return null;
    }

    /** Whether {@code rule} allows {@code request}. */
    static boolean covers(JsonNode rule, RequestInfo request) {
        if (!contains(rule.path("verbs"), request.verb())) {
            return false;
        }
        if (!request.isResourceRequest()) {
            for (JsonNode url : rule.path("nonResourceURLs")) {
                String u = url.asText();
                if (u.equals("*")
                        || u.equals(request.path())
                        || (u.endsWith("*") && request.path().startsWith(u.substring(0, u.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }
        ResourcePath rp = request.resource();
        if (!contains(rule.path("apiGroups"), rp.group())) {
            return false;
        }
        if (!resourceMatches(rule.path("resources"), rp.plural(), rp.subresource())) {
            return false;
        }
        JsonNode names = rule.path("resourceNames");
        if (names.isEmpty()) {
            return true;
        }
        return request.name() != null && containsExactly(names, request.name());
    }

    static boolean resourceMatches(JsonNode resources, String resource, String subresource) {
        String combined = subresource == null ? resource : resource + "/" + subresource;
        for (JsonNode r : resources) {
            String s = r.asText();
            if (s.equals("*") || s.equals(combined)) {
                return true;
            }
            if (subresource != null && s.equals("*/" + subresource)) {
                return true;
            }
        }
        return false;
    }

    /** {@code values} holds {@code "*"} or {@code value}. */
    static boolean contains(JsonNode values, String value) {
        for (JsonNode v : values) {
            if (v.asText().equals("*") || v.asText().equals(value)) {
                return true;
            }
        }
        return false;
    }

    private static boolean containsExactly(JsonNode values, String value) {
        for (JsonNode v : values) {
            if (v.asText().equals(value)) {
                return true;
            }
        }
        return false;
    }

    private static List<JsonNode> list(JsonNode array) {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }

    private List<JsonNode> clusterAdminRules() {
        List<JsonNode> rules = roleRules("ClusterRole", "cluster-admin", null);
        return rules == null ? List.of() : rules;
    }

    /** Kubernetes' aggregate error text: one error as itself, more in brackets. */
    private static String aggregate(List<String> errors) {
        return errors.size() == 1 ? errors.getFirst() : "[" + String.join(", ", errors) + "]";
    }
}
