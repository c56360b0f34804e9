package dev.drover.httpapi;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Who may call the agent's HTTPS API: the caller's Kubernetes bearer token is
 * checked with a TokenReview, and the caller's right with a SubjectAccessReview
 * for {@code get} on the virtual subresource ({@code allocations/log},
 * {@code allocations/stats}, {@code allocations/snapshot} of group
 * {@code drover.dev}) in the allocation's namespace, so the rules are the
 * cluster's RBAC. Answers are kept for {@link #CACHE_FOR} (keyed by a hash of
 * the token, never the token), so a followed log or a busy client costs the
 * API server one pair of reviews a minute at most.
 */
public final class KubernetesAuth {

    public static final Duration CACHE_FOR = Duration.ofMinutes(1);
    static final int CACHE_SIZE = 1_000;
    static final String GROUP = "drover.dev";

    /** An authenticated caller. */
    public record Caller(String user, List<String> groups) {
    }

    /** The answer for one request: allowed (with the caller), or refused with an HTTP status and why. */
    public sealed interface Decision {
        record Allowed(Caller caller) implements Decision {
        }

        record Refused(int status, String message) implements Decision {
        }
    }

    private record Cached(Decision decision, Instant until) {
    }

    private final KubernetesClient client;
    private final InstantSource clock;
    private final Map<String, Cached> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
            return size() > CACHE_SIZE;
        }
    };

    public KubernetesAuth(KubernetesClient client, InstantSource clock) {
        this.client = client;
        this.clock = clock;
    }

    /**
     * Whether the request with this {@code Authorization} header may {@code get} {@code subresource} of
     * allocation {@code name} in {@code namespace}.
     */
    public Decision check(String authorization, String namespace, String name, String subresource) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.substring(7).isBlank()) {
            return new Decision.Refused(401, "no bearer token: send your Kubernetes token as"
                    + " \"Authorization: Bearer TOKEN\" (kubectl drover sends your kubeconfig's)");
        }
        String token = authorization.substring(7).trim();
        String key = hash(token) + "\n" + namespace + "\n" + name + "\n" + subresource;
        Instant now = clock.instant();
        synchronized (cache) {
            Cached c = cache.get(key);
            if (c != null && c.until().isAfter(now)) {
                return c.decision();
            }
        }
        Decision decision = review(token, namespace, name, subresource);
        if (!(decision instanceof Decision.Refused r && r.status() >= 500)) { // an API server hiccup is not remembered
            synchronized (cache) {
                cache.put(key, new Cached(decision, now.plus(CACHE_FOR)));
            }
        }
        return decision;
    }

    private Decision review(String token, String namespace, String name, String subresource) {
        TokenReview answer;
        try {
            answer = client.authentication().v1().tokenReviews().create(new TokenReviewBuilder()
                    .withNewSpec().withToken(token).endSpec().build());
        } catch (KubernetesClientException e) {
            return new Decision.Refused(503, "the agent could not check the token with the API server: " + e.getMessage());
        }
        if (answer.getStatus() == null || !Boolean.TRUE.equals(answer.getStatus().getAuthenticated())
                || answer.getStatus().getUser() == null) {
            String why = answer.getStatus() == null || answer.getStatus().getError() == null ? ""
                    : ": " + answer.getStatus().getError();
            return new Decision.Refused(401, "the API server does not accept this token" + why);
        }
        UserInfo user = answer.getStatus().getUser();
        Caller caller = new Caller(user.getUsername(), user.getGroups() == null ? List.of() : List.copyOf(user.getGroups()));
        SubjectAccessReview access;
        try {
            access = client.authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
                    .withNewSpec().withUser(user.getUsername()).withGroups(user.getGroups()).withUid(user.getUid())
                    .withExtra(user.getExtra())
                    .withNewResourceAttributes().withGroup(GROUP).withResource("allocations")
                    .withSubresource(subresource).withVerb("get").withNamespace(namespace).withName(name)
                    .endResourceAttributes().endSpec().build());
        } catch (KubernetesClientException e) {
            return new Decision.Refused(503, "the agent could not check access with the API server: " + e.getMessage());
        }
        if (access.getStatus() == null || !Boolean.TRUE.equals(access.getStatus().getAllowed())) {
            String reason = access.getStatus() == null || access.getStatus().getReason() == null
                    || access.getStatus().getReason().isBlank() ? "" : " (" + access.getStatus().getReason() + ")";
            return new Decision.Refused(403, "user \"" + caller.user() + "\" cannot get allocations/" + subresource
                    + " in namespace \"" + namespace + "\"" + reason + "; an RBAC rule on resource \"allocations/"
                    + subresource + "\" of group drover.dev grants it");
        }
        return new Decision.Allowed(caller);
    }

    private static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
