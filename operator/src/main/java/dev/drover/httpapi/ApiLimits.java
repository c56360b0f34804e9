package dev.drover.httpapi;

import java.time.Duration;

/**
 * What callers of the agent's HTTPS API may cost the agent and the API server.
 *
 * @param maxFollowers             followed logs ({@code follow=true}) served at once, by all callers together
 * @param maxFollowersPerCaller    followed logs served at once to one user (as the TokenReview names them)
 * @param maxFollowersPerNamespace followed logs of allocations in one namespace served at once, whoever the
 *                                 callers: a namespace's owner may mint ServiceAccounts, each a caller of its own
 * @param reviewsPerSecond         TokenReviews and SubjectAccessReviews the agent asks per second for one source
 *                                 address, after a burst; answers from the cache cost nothing
 * @param reviewBurst              reviews one source address may cause at once before the rate applies
 * @param reviewTimeout            how long the agent waits for the API server to answer one review before it
 *                                 answers 503
 */
public record ApiLimits(
        int maxFollowers,
        int maxFollowersPerCaller,
        int maxFollowersPerNamespace,
        double reviewsPerSecond,
        int reviewBurst,
        Duration reviewTimeout) {

    /** Each followed log holds a connection and a thread; a few hundred cost the agent a few megabytes. */
    public static final ApiLimits DEFAULT = new ApiLimits(256, 16, perNamespace(256), 10, 40, Duration.ofSeconds(5));

    /**
     * The per-namespace bound unless one is set: a quarter of {@code maxFollowers}, so it takes four namespaces (not
     * sixteen ServiceAccounts minted in one) to fill an agent, and a file that sets a small {@code maxFollowers}
     * alone stays valid.
     */
    public static int perNamespace(int maxFollowers) {
        return Math.max(1, maxFollowers / 4);
    }

    public ApiLimits {
        if (maxFollowers < 1) {
            throw new IllegalArgumentException("api.maxFollowers: " + maxFollowers + " must be at least 1");
        }
        if (maxFollowersPerCaller < 1 || maxFollowersPerCaller > maxFollowers) {
            throw new IllegalArgumentException("api.maxFollowersPerCaller: " + maxFollowersPerCaller
                    + " must be between 1 and api.maxFollowers (" + maxFollowers + ")");
        }
        if (maxFollowersPerNamespace < 1 || maxFollowersPerNamespace > maxFollowers) {
            throw new IllegalArgumentException("api.maxFollowersPerNamespace: " + maxFollowersPerNamespace
                    + " must be between 1 and api.maxFollowers (" + maxFollowers + ")");
        }
        if (!(reviewsPerSecond > 0) || Double.isInfinite(reviewsPerSecond)) {
            throw new IllegalArgumentException(
                    "api.reviewsPerSecond: " + reviewsPerSecond + " must be a positive number");
        }
        if (reviewBurst < 1) {
            throw new IllegalArgumentException("api.reviewBurst: " + reviewBurst + " must be at least 1");
        }
        if (reviewTimeout.isNegative() || reviewTimeout.isZero()) {
            throw new IllegalArgumentException("api.reviewTimeout: " + reviewTimeout + " must be positive");
        }
    }
}
