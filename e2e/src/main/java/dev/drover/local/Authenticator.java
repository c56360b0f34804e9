package dev.drover.local;

import java.util.List;
import java.util.Map;

/**
 * Finds who made a request from its {@code Authorization} header, as a real server's authenticators do: no header is
 * the anonymous user, a token it does not know is a 401.
 */
final class Authenticator {

    /** The user of the kubeconfig the server writes: the local cluster's administrator. */
    static final UserInfo ADMIN = new UserInfo(
            "drover-local-admin", "drover-local-admin", List.of("system:masters", "system:authenticated"), Map.of());

    /** The caller, or a 401 {@link ApiFront.ApiError} for credentials that prove nobody. */
    UserInfo authenticate(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return UserInfo.ANONYMOUS;
        }
        UserInfo user = review(bearer(authorization));
        if (user == null) {
            throw unauthorized();
        }
        return user;
    }

    /** Who a token proves the bearer is, or null: what a TokenReview answers. */
    UserInfo review(String token) {
        return Kubeconfig.NAME.equals(token) ? ADMIN : null;
    }

    private static String bearer(String authorization) {
        String[] parts = authorization.trim().split("\\s+", 2);
        return parts.length == 2 && parts[0].equalsIgnoreCase("Bearer") ? parts[1].trim() : null;
    }

    static ApiFront.ApiError unauthorized() {
        return new ApiFront.ApiError(401, "Unauthorized", "Unauthorized");
    }
}
