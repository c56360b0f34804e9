package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview ({@code kubectl auth can-i}) and
 * SelfSubjectRulesReview ({@code kubectl auth can-i --list}), answered by the same {@link Rbac} that authorizes every
 * request, with its {@code status.reason}.
 */
final class AccessReviews {

    private final Rbac rbac;

    AccessReviews(Rbac rbac) {
        this.rbac = rbac;
    }

    /** The reviews this answers, for the server's review table. */
    Map<ResourceType, Review> reviews() {
        return Map.of(
                Catalog.SUBJECT_ACCESS_REVIEWS, (review, caller, namespace) -> access(review, subject(review), null),
                Catalog.LOCAL_SUBJECT_ACCESS_REVIEWS,
                        (review, caller, namespace) -> access(review, subject(review), namespace),
                Catalog.SELF_SUBJECT_ACCESS_REVIEWS, (review, caller, namespace) -> access(review, caller, null),
                Catalog.SELF_SUBJECT_RULES_REVIEWS, (review, caller, namespace) -> rules(review, caller));
    }

    /** The user a SubjectAccessReview asks about: {@code spec.user}, {@code groups}, {@code extra}, {@code uid}. */
    private static UserInfo subject(ObjectNode review) {
        JsonNode spec = review.path("spec");
        List<String> groups = new ArrayList<>();
        spec.path("groups").forEach(g -> groups.add(g.asText()));
        Map<String, List<String>> extra = new LinkedHashMap<>();
        spec.path("extra").fields().forEachRemaining(e -> {
            List<String> values = new ArrayList<>();
            e.getValue().forEach(v -> values.add(v.asText()));
            extra.put(e.getKey(), values);
        });
        if (spec.path("user").asText("").isEmpty() && groups.isEmpty()) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "SubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.user: Invalid value: \"\": at"
                            + " least one of user or group must be specified");
        }
        return new UserInfo(spec.path("user").asText(""), spec.path("uid").asText(""), groups, extra);
    }

    private ObjectNode access(ObjectNode review, UserInfo user, String pathNamespace) {
        JsonNode spec = review.path("spec");
        JsonNode resource = spec.path("resourceAttributes");
        JsonNode nonResource = spec.path("nonResourceAttributes");
        if (resource.isObject() == nonResource.isObject()) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    review.path("kind").asText("SubjectAccessReview") + ".authorization.k8s.io \"\" is invalid:"
                            + " spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes"
                            + " or resourceAttributes must be specified");
        }
        RequestInfo request;
        if (resource.isObject()) {
            String namespace = resource.path("namespace").asText("");
            if (pathNamespace != null && !pathNamespace.equals(namespace)) {
                throw new ApiFront.ApiError(
                        400,
                        "BadRequest",
                        "spec.resourceAttributes.namespace must match metadata.namespace: \"" + namespace + "\" and \""
                                + pathNamespace + "\"");
            }
            String name = resource.path("name").asText("");
            String sub = resource.path("subresource").asText("");
            request = new RequestInfo(
                    resource.path("verb").asText(""),
                    "",
                    new ResourcePath(
                            resource.path("group").asText(""),
                            resource.path("version").asText(""),
                            namespace.isEmpty() ? null : namespace,
                            resource.path("resource").asText(""),
                            name.isEmpty() ? null : name,
                            sub.isEmpty() ? null : sub),
                    name.isEmpty() ? null : name);
        } else {
            request = new RequestInfo(
                    nonResource.path("verb").asText(""),
                    nonResource.path("path").asText(""),
                    null,
                    null);
        }
        Authorizer.Decision decision = rbac.authorize(user, request);
        ObjectNode out = review.deepCopy();
        ObjectNode status = out.putObject("status").put("allowed", decision.allowed());
        if (!decision.reason().isEmpty()) {
            status.put("reason", decision.reason());
        }
        return out;
    }

    private ObjectNode rules(ObjectNode review, UserInfo caller) {
        String namespace = review.path("spec").path("namespace").asText("");
        ObjectNode out = review.deepCopy();
        ObjectNode status = out.putObject("status");
        ArrayNode resourceRules = status.putArray("resourceRules");
        ArrayNode nonResourceRules = status.putArray("nonResourceRules");
        for (JsonNode rule : rbac.rulesFor(caller, namespace.isEmpty() ? null : namespace)) {
            if (rule.has("nonResourceURLs")) {
                ObjectNode r = nonResourceRules.addObject();
                r.set("verbs", rule.path("verbs").deepCopy());
                r.set("nonResourceURLs", rule.path("nonResourceURLs").deepCopy());
            } else {
                ObjectNode r = resourceRules.addObject();
                r.set("verbs", rule.path("verbs").deepCopy());
                for (String field : List.of("apiGroups", "resources", "resourceNames")) {
                    if (rule.has(field)) {
                        r.set(field, rule.get(field).deepCopy());
                    }
                }
            }
        }
        status.put("incomplete", false);
        return out;
    }
}
