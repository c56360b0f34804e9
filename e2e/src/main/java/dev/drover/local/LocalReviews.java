package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * TokenReview and SubjectAccessReview as the local API server answers them, so
 * that the agent's HTTPS API works on the local cluster. The local cluster has
 * one user: the kubeconfig it writes carries the token {@value Kubeconfig#NAME},
 * which reviews as user {@value #ADMIN} in {@code system:masters}, allowed
 * everything (as {@code system:masters} is on a real cluster); any other token is
 * refused. This is the local server's own shortcut: a real API server answers
 * these reviews itself, from its authenticators and RBAC.
 */
final class LocalReviews {

    static final String ADMIN = Authenticator.ADMIN.username();

    private LocalReviews() {}

    static ObjectNode tokenReview(ObjectNode review, Authenticator authenticator) {
        ObjectNode out = review.deepCopy();
        ObjectNode status = out.putObject("status");
        UserInfo user = authenticator.review(review.path("spec").path("token").asText());
        if (user != null) {
            status.put("authenticated", true);
            ObjectNode u =
                    status.putObject("user").put("username", user.username()).put("uid", user.uid());
            user.groups().forEach(u.putArray("groups")::add);
        } else {
            status.put("authenticated", false).put("error", "the local API server knows one token: its kubeconfig's");
        }
        return out;
    }

    static ObjectNode accessReview(ObjectNode review) {
        ObjectNode out = review.deepCopy();
        JsonNode spec = review.path("spec");
        boolean admin = ADMIN.equals(spec.path("user").asText());
        for (JsonNode g : spec.path("groups")) {
            admin |= g.asText().equals("system:masters");
        }
        ObjectNode status = out.putObject("status").put("allowed", admin);
        status.put(
                "reason",
                admin
                        ? "the local cluster's admin may do everything"
                        : "the local API server has no RBAC: only its admin is allowed");
        return out;
    }
}
