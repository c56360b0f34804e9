package dev.drover.local;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * TokenReview and SelfSubjectReview, answered by the server's {@link Authenticator} as the real ones are: a
 * TokenReview with {@code spec.audiences} checks the token against those (the API server's when it names none) and
 * says in {@code status.audiences} which of them it is valid for; a SelfSubjectReview ({@code kubectl auth whoami})
 * tells the caller who they are. SubjectAccessReview is answered by the authorizer.
 */
final class LocalReviews {

    private LocalReviews() {}

    static ObjectNode tokenReview(ObjectNode review, Authenticator authenticator) {
        ObjectNode out = review.deepCopy();
        List<String> audiences = new ArrayList<>();
        review.path("spec").path("audiences").forEach(a -> audiences.add(a.asText()));
        if (audiences.isEmpty()) {
            audiences.addAll(ServiceAccountTokens.API_AUDIENCES);
        }
        ObjectNode status = out.putObject("status");
        Authenticator.Review answer =
                authenticator.review(review.path("spec").path("token").asText(""), audiences);
        if (answer.user() == null) {
            status.putObject("user");
            if (answer.error() != null) {
                status.put("error", answer.error());
            }
            return out;
        }
        status.put("authenticated", true);
        user(status.putObject("user"), answer.user());
        answer.audiences().forEach(status.putArray("audiences")::add);
        return out;
    }

    static ObjectNode selfSubjectReview(ObjectNode review, UserInfo caller) {
        ObjectNode out = review.deepCopy();
        out.withObject("metadata").put("creationTimestamp", (String) null);
        user(out.putObject("status").putObject("userInfo"), caller);
        return out;
    }

    /** A {@code UserInfo} of authentication.k8s.io/v1, as the real server writes it (empty fields left out). */
    static void user(ObjectNode node, UserInfo user) {
        node.put("username", user.username());
        if (!user.uid().isEmpty()) {
            node.put("uid", user.uid());
        }
        user.groups().forEach(node.putArray("groups")::add);
        if (!user.extra().isEmpty()) {
            ObjectNode extra = node.putObject("extra");
            for (Map.Entry<String, List<String>> e : user.extra().entrySet()) {
                e.getValue().forEach(extra.putArray(e.getKey())::add);
            }
        }
    }
}
