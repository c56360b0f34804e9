package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds who made a request from its {@code Authorization} header, as a real server's authenticators do: no header is
 * the anonymous user, a token nobody issued is a 401. Two kinds of token prove someone: the administrator's static
 * token (the kubeconfig's, as a token file would give it) and service-account tokens this server signed
 * ({@link ServiceAccountTokens}), valid only while their ServiceAccount, and the object they are bound to, exist
 * with the uids they name, as the real service-account authenticator checks.
 */
final class Authenticator {

    /** The user of the kubeconfig the server writes: the local cluster's administrator. */
    static final UserInfo ADMIN = new UserInfo(
            "drover-local-admin", "drover-local-admin", List.of("system:masters", "system:authenticated"), Map.of());

    static final String POD_NAME = "authentication.kubernetes.io/pod-name";
    static final String POD_UID = "authentication.kubernetes.io/pod-uid";
    static final String NODE_NAME = "authentication.kubernetes.io/node-name";
    static final String NODE_UID = "authentication.kubernetes.io/node-uid";
    static final String CREDENTIAL_ID = "authentication.kubernetes.io/credential-id";

    private final ObjectStore store;
    private final ServiceAccountTokens tokens;

    Authenticator(ObjectStore store, ServiceAccountTokens tokens) {
        this.store = store;
        this.tokens = tokens;
    }

    /** Who a token proves the bearer is, and for which of the audiences asked; or why it proves nobody. */
    record Review(UserInfo user, List<String> audiences, String error) {}

    /** The caller, or a 401 {@link ApiFront.ApiError} for credentials that prove nobody. */
    UserInfo authenticate(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return UserInfo.ANONYMOUS;
        }
        String token = bearer(authorization);
        Review review = token == null ? null : review(token, ServiceAccountTokens.API_AUDIENCES);
        if (review == null || review.user() == null) {
            throw unauthorized();
        }
        return review.user();
    }

    /**
     * What a TokenReview answers for {@code token} and the audiences asked ({@code spec.audiences}, or the API
     * server's when it names none): the user and the audiences of theirs the token is valid for.
     */
    Review review(String token, List<String> audiences) {
        if (Kubeconfig.NAME.equals(token)) {
            // A static token is audience-agnostic: kube-apiserver takes it only for its own audiences, so a
            // token handed to some other service cannot be replayed there as if it had been meant for it.
            List<String> own = audiences.stream()
                    .filter(ServiceAccountTokens.API_AUDIENCES::contains)
                    .toList();
            return own.isEmpty() ? new Review(null, List.of(), null) : new Review(ADMIN, own, null);
        }
        ObjectNode claims;
        try {
            claims = tokens.verify(token, audiences);
        } catch (ServiceAccountTokens.Invalid e) {
            return new Review(null, List.of(), "[invalid bearer token, " + e.getMessage() + "]");
        }
        JsonNode k8s = claims.path("kubernetes.io");
        String namespace = k8s.path("namespace").asText();
        JsonNode sa = k8s.path("serviceaccount");
        String saUid = liveUid(Catalog.SERVICE_ACCOUNTS, namespace, sa);
        if (saUid == null) {
            return new Review(
                    null,
                    List.of(),
                    "[invalid bearer token, service account " + namespace + "/"
                            + sa.path("name").asText() + " has been deleted or recreated]");
        }
        Map<String, List<String>> extra = new LinkedHashMap<>();
        if (k8s.has("pod")) {
            if (liveUid(Catalog.PODS, namespace, k8s.path("pod")) == null) {
                return new Review(
                        null,
                        List.of(),
                        "[invalid bearer token, pod "
                                + k8s.path("pod").path("name").asText() + " has been deleted or recreated]");
            }
            extra.put(POD_NAME, List.of(k8s.path("pod").path("name").asText()));
            extra.put(POD_UID, List.of(k8s.path("pod").path("uid").asText()));
        }
        if (k8s.has("secret") && liveUid(Catalog.SECRETS, namespace, k8s.path("secret")) == null) {
            return new Review(
                    null,
                    List.of(),
                    "[invalid bearer token, secret "
                            + k8s.path("secret").path("name").asText() + " has been deleted or recreated]");
        }
        if (k8s.has("node")) {
            boolean boundToNode = !k8s.has("pod") && !k8s.has("secret");
            if (boundToNode && liveUid(Catalog.NODES, null, k8s.path("node")) == null) {
                return new Review(
                        null,
                        List.of(),
                        "[invalid bearer token, node "
                                + k8s.path("node").path("name").asText() + " has been deleted or recreated]");
            }
            extra.put(NODE_NAME, List.of(k8s.path("node").path("name").asText()));
            extra.put(NODE_UID, List.of(k8s.path("node").path("uid").asText()));
        }
        if (claims.hasNonNull("jti")) {
            extra.put(CREDENTIAL_ID, List.of("JTI=" + claims.path("jti").asText()));
        }
        UserInfo user = new UserInfo(
                claims.path("sub").asText(),
                saUid,
                List.of("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"),
                extra);
        List<String> valid = ServiceAccountTokens.audiences(claims).stream()
                .filter(audiences::contains)
                .toList();
        return new Review(user, valid, null);
    }

    /** The uid of the object {@code ref} names when it exists with the uid the token names; else null. */
    private String liveUid(ResourceType type, String namespace, JsonNode ref) {
        String name = ref.path("name").asText("");
        String uid = ref.path("uid").asText("");
        if (name.isEmpty()) {
            return null;
        }
        try {
            String live = store.get(type, namespace, name)
                    .path("metadata")
                    .path("uid")
                    .asText();
            return live.equals(uid) ? live : null;
        } catch (ApiFront.ApiError gone) {
            return null;
        }
    }

    private static String bearer(String authorization) {
        String[] parts = authorization.trim().split("\\s+", 2);
        return parts.length == 2 && parts[0].equalsIgnoreCase("Bearer") ? parts[1].trim() : null;
    }

    static ApiFront.ApiError unauthorized() {
        return new ApiFront.ApiError(401, "Unauthorized", "Unauthorized");
    }
}
