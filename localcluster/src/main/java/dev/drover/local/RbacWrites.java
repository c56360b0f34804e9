package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * RBAC's own rules for writing RBAC objects, as the real registry enforces them: nobody grants what they do not
 * hold. Creating or updating a Role or ClusterRole needs every permission it grants (or the {@code escalate} verb on
 * it); creating or updating a binding needs every permission of the role it binds, in the binding's namespace (or
 * the {@code bind} verb on that role). A binding's {@code roleRef} cannot change. Members of {@code system:masters}
 * hold everything.
 */
final class RbacWrites implements Admission {

    private final Rbac rbac;

    RbacWrites(Rbac rbac) {
        this.rbac = rbac;
    }

    @Override
    public void admit(Request request) {
        ResourceType type = request.type();
        if (request.operation() == Operation.DELETE || !type.group().equals(Rbac.GROUP)) {
            return;
        }
        boolean role = type.equals(Rbac.ROLES) || type.equals(Rbac.CLUSTER_ROLES);
        if (!role
                && request.oldObject() != null
                && !request.oldObject().path("roleRef").equals(request.object().path("roleRef"))) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    type.kind() + "." + Rbac.GROUP + " \"" + request.name() + "\" is invalid: roleRef: Invalid value: "
                            + request.object().path("roleRef") + ": cannot change roleRef");
        }
        UserInfo user = request.user();
        if (user.inGroup("system:masters")) {
            return;
        }
        List<JsonNode> granted;
        if (role) {
            if (allowed(user, "escalate", type, request.namespace(), request.name())) {
                return;
            }
            granted = new ArrayList<>();
            request.object().path("rules").forEach(granted::add);
        } else {
            JsonNode ref = request.object().path("roleRef");
            ResourceType refType = ref.path("kind").asText().equals("Role") ? Rbac.ROLES : Rbac.CLUSTER_ROLES;
            String refNamespace = refType.equals(Rbac.ROLES) ? request.namespace() : null;
            if (allowed(
                    user,
                    "bind",
                    refType,
                    refNamespace == null ? request.namespace() : refNamespace,
                    ref.path("name").asText())) {
                return;
            }
            granted = rbac.roleRules(ref.path("kind").asText(), ref.path("name").asText(), request.namespace());
            if (granted == null) {
                throw new ApiFront.ApiError(
                        404,
                        "NotFound",
                        refType.singular() + "." + Rbac.GROUP + " \""
                                + ref.path("name").asText() + "\" not found");
            }
        }
        List<JsonNode> held = rbac.rulesFor(user, request.namespace());
        List<String> missing = new ArrayList<>();
        for (JsonNode rule : granted) {
            if (!Coverage.covered(held, rule)) {
                missing.add(describe(rule));
            }
        }
        if (!missing.isEmpty()) {
            String qualified = type.plural() + "." + Rbac.GROUP;
            throw new ApiFront.ApiError(
                    403,
                    "Forbidden",
                    qualified + " \"" + request.name() + "\" is forbidden: user \"" + user.username() + "\" (groups="
                            + user.groups().stream()
                                    .map(g -> "\"" + g + "\"")
                                    .toList()
                                    .toString()
                                    .replace(",", "")
                            + ") is attempting to grant RBAC permissions not currently held:\n"
                            + String.join("\n", missing),
                    request.name(),
                    Rbac.GROUP,
                    type.plural());
        }
    }

    private boolean allowed(UserInfo user, String verb, ResourceType type, String namespace, String name) {
        return rbac.authorize(
                        user,
                        new RequestInfo(
                                verb,
                                "",
                                new ResourcePath(Rbac.GROUP, "v1", namespace, type.plural(), name, null),
                                name))
                .allowed();
    }

    private static String describe(JsonNode rule) {
        StringBuilder out = new StringBuilder("{");
        for (String field : List.of("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")) {
            if (rule.path(field).isArray() && !rule.path(field).isEmpty()) {
                if (out.length() > 1) {
                    out.append(", ");
                }
                out.append(Character.toUpperCase(field.charAt(0)))
                        .append(field.substring(1))
                        .append(":")
                        .append(rule.path(field).toString().replace(",", " "));
            }
        }
        return out.append("}").toString();
    }

    /** RBAC's coverage: does some held rule allow every verb, group, resource, name and URL a rule grants. */
    static final class Coverage {
        private Coverage() {}

        static boolean covered(List<JsonNode> held, JsonNode rule) {
            for (JsonNode verb : rule.path("verbs")) {
                for (JsonNode url : rule.path("nonResourceURLs")) {
                    if (held.stream()
                            .noneMatch(h -> has(h.path("verbs"), verb.asText())
                                    && urlCovered(h.path("nonResourceURLs"), url.asText()))) {
                        return false;
                    }
                }
                for (JsonNode group : rule.path("apiGroups")) {
                    for (JsonNode resource : rule.path("resources")) {
                        List<String> names = new ArrayList<>();
                        rule.path("resourceNames").forEach(n -> names.add(n.asText()));
                        if (names.isEmpty()) {
                            names.add(null);
                        }
                        for (String name : names) {
                            if (held.stream()
                                    .noneMatch(h -> has(h.path("verbs"), verb.asText())
                                            && has(h.path("apiGroups"), group.asText())
                                            && resourceCovered(h.path("resources"), resource.asText())
                                            && nameCovered(h.path("resourceNames"), name))) {
                                return false;
                            }
                        }
                    }
                }
            }
            return true;
        }

        /** {@code values} holds {@code *} or exactly {@code value} (a granted {@code *} needs a held {@code *}). */
        private static boolean has(JsonNode values, String value) {
            for (JsonNode v : values) {
                if (v.asText().equals("*") || v.asText().equals(value)) {
                    return true;
                }
            }
            return false;
        }

        private static boolean resourceCovered(JsonNode held, String resource) {
            if (has(held, resource)) {
                return true;
            }
            int slash = resource.indexOf('/');
            return slash > 0 && has(held, "*" + resource.substring(slash));
        }

        private static boolean nameCovered(JsonNode held, String name) {
            if (held.isEmpty()) {
                return true;
            }
            if (name == null) {
                return false;
            }
            for (JsonNode n : held) {
                if (n.asText().equals(name)) {
                    return true;
                }
            }
            return false;
        }

        private static boolean urlCovered(JsonNode held, String url) {
            for (JsonNode h : held) {
                String s = h.asText();
                if (s.equals("*")
                        || s.equals(url)
                        || (s.endsWith("*") && url.startsWith(s.substring(0, s.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }
    }
}
