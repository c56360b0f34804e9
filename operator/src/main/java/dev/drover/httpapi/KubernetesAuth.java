package dev.drover.httpapi;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.common.UserText;
import dev.drover.ratelimit.TokenBucket;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.InetAddress;
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
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Who may call the agent's HTTPS API: the caller's Kubernetes bearer token is
 * checked with a TokenReview for audience {@link AgentProtocol#AUDIENCE} only, so a token
 * sent here cannot be replayed against the API server (and a token meant for
 * the API server is refused here); the caller's right is checked with a
 * SubjectAccessReview for {@code get} on the virtual subresource
 * ({@code allocations/log}, {@code allocations/stats},
 * {@code allocations/snapshot} of group {@code agent.drover.dev}, the names
 * users are granted on the aggregated API), or {@code create} on
 * {@code allocations/signal} (a POST, as kube-apiserver names it), in the allocation's namespace, so
 * the rules are the cluster's RBAC. Answers are kept for {@link #CACHE_FOR}
 * (keyed by a hash of the token or the identity, never the token), so a
 * followed log or a busy client costs the API server one pair of reviews a
 * minute at most.
 * <p>
 * Unauthenticated callers cannot make the agent flood the API server: a token
 * the API server refused is refused again without asking for
 * {@link #REFUSED_FOR}, and each source address may cause
 * {@link ApiLimits#reviewsPerSecond()} reviews a second after a burst (429
 * beyond). Each review has {@link ApiLimits#reviewTimeout()} to be answered;
 * past it, or when the API server cannot be reached, the request fails
 * closed with 503.
 */
public final class KubernetesAuth {

    public static final Duration CACHE_FOR = Duration.ofMinutes(1);
    /** Long enough that retrying a bad token is free, short enough that a token just issued works soon. */
    public static final Duration REFUSED_FOR = Duration.ofSeconds(10);

    static final int CACHE_SIZE = 1_000;
    /** Source addresses whose review budget is remembered; the least recently seen is forgotten first. */
    static final int SOURCES = 10_000;

    /** The user extra a node-bound ServiceAccount token carries: the node its pod runs on. */
    static final String NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name";

    /** An authenticated caller; {@code node}: the node its token is bound to, or null when it is bound to none. */
    public record Caller(String user, List<String> groups, String node) {
        public Caller {
            groups = List.copyOf(groups);
        }
    }

    /** The answer for one request: allowed (with the caller), or refused with an HTTP status and why. */
    public sealed interface Decision {
        record Allowed(Caller caller) implements Decision {}

        /** {@code retryAfter}: when the caller may try again (a 429); zero when that is not the point. */
        record Refused(int status, String message, Duration retryAfter) implements Decision {
            public Refused(int status, String message) {
                this(status, message, Duration.ZERO);
            }
        }
    }

    /** What the TokenReview said of a token: who it is, or why not. */
    private record Authenticated(UserInfo user, Decision.Refused refused) {}

    private final KubernetesClient client;
    private final InstantSource clock;
    private final ApiLimits limits;
    private final Expiring<Decision> decisions = new Expiring<>(CACHE_SIZE);
    private final Expiring<Authenticated> tokens = new Expiring<>(CACHE_SIZE);
    private final Map<InetAddress, TokenBucket> budgets = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<InetAddress, TokenBucket> eldest) {
            return size() > SOURCES;
        }
    };

    public KubernetesAuth(KubernetesClient client, InstantSource clock) {
        this(client, clock, ApiLimits.DEFAULT);
    }

    public KubernetesAuth(KubernetesClient client, InstantSource clock, ApiLimits limits) {
        this.client = client;
        this.clock = clock;
        this.limits = limits;
    }

    /**
     * Whether the request from {@code source} with this {@code Authorization} header may {@code get}
     * {@code subresource} of allocation {@code name} in {@code namespace}.
     */
    public Decision check(String authorization, InetAddress source, String namespace, String name, String subresource) {
        return check(authorization, source, namespace, name, "get", subresource);
    }

    /** As {@link #check(String, InetAddress, String, String, String)}, for {@code verb} ({@code get}, {@code create}). */
    public Decision check(
            String authorization, InetAddress source, String namespace, String name, String verb, String subresource) {
        if (authorization == null
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.substring(7).isBlank()) {
            return new Decision.Refused(
                    401,
                    "no bearer token: send your Kubernetes token as"
                            + " \"Authorization: Bearer TOKEN\" (kubectl drover sends your kubeconfig's)");
        }
        String token = authorization.substring(7).trim();
        String tokenKey = hash(token);
        String key = tokenKey + "\n" + namespace + "\n" + name + "\n" + verb + "\n" + subresource;
        Optional<Decision> known = decisions.get(key, clock.instant());
        if (known.isPresent()) {
            return known.get();
        }
        Optional<Authenticated> who = tokens.get(tokenKey, clock.instant());
        if (who.isEmpty()) {
            Optional<Decision.Refused> tooMany = spend(source);
            if (tooMany.isPresent()) {
                return tooMany.get();
            }
            Authenticated answer = authenticate(token);
            if (answer.refused() != null && answer.refused().status() >= 500) {
                return answer.refused(); // an API server hiccup is not remembered
            }
            tokens.put(tokenKey, answer, clock.instant().plus(answer.refused() == null ? CACHE_FOR : REFUSED_FOR));
            who = Optional.of(answer);
        }
        if (who.get().refused() != null) {
            return who.get().refused();
        }
        Optional<Decision.Refused> tooMany = spend(source);
        if (tooMany.isPresent()) {
            return tooMany.get();
        }
        Decision decision = authorize(who.get().user(), namespace, name, verb, subresource);
        if (!(decision instanceof Decision.Refused r && r.status() >= 500)) {
            decisions.put(key, decision, clock.instant().plus(CACHE_FOR));
        }
        return decision;
    }

    /**
     * Whether {@code user} (as authenticated by a TokenReview, or by a front proxy's headers) may {@code get}
     * {@code subresource} of allocation {@code name} in {@code namespace}: a SubjectAccessReview with the user's
     * name, groups, uid and extra, its answer kept for {@link #CACHE_FOR}; 503 when the API server does not
     * answer in time.
     */
    public Decision authorize(UserInfo user, String namespace, String name, String subresource) {
        return authorize(user, namespace, name, "get", subresource);
    }

    /** As {@link #authorize(UserInfo, String, String, String)}, for {@code verb} ({@code get}, {@code create}). */
    public Decision authorize(UserInfo user, String namespace, String name, String verb, String subresource) {
        if (user == null || user.getUsername() == null || user.getUsername().isEmpty()) {
            return new Decision.Refused(401, "no user to check: the request names no authenticated user");
        }
        String key = "user\n" + identity(user) + "\n" + namespace + "\n" + name + "\n" + verb + "\n" + subresource;
        Optional<Decision> known = decisions.get(key, clock.instant());
        if (known.isPresent()) {
            return known.get();
        }
        Decision decision = review(user, namespace, name, verb, subresource);
        if (!(decision instanceof Decision.Refused r && r.status() >= 500)) {
            decisions.put(key, decision, clock.instant().plus(CACHE_FOR));
        }
        return decision;
    }

    /** Takes one review from {@code source}'s budget; a 429 when it has none left. */
    private Optional<Decision.Refused> spend(InetAddress source) {
        Duration wait;
        long now = nanos(clock.instant());
        synchronized (budgets) {
            TokenBucket budget = budgets.computeIfAbsent(
                    source, s -> new TokenBucket(limits.reviewsPerSecond(), limits.reviewBurst(), now));
            if (budget.tryTake(now)) {
                return Optional.empty();
            }
            wait = Duration.ofNanos(budget.nanosUntilToken(now));
        }
        long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
        return Optional.of(new Decision.Refused(
                429,
                "too many requests from " + source.getHostAddress()
                        + " need the API server to check a token or a right: the agent asks at most "
                        + limits.reviewsPerSecond() + " reviews a second for one address, after a burst of "
                        + limits.reviewBurst() + "; retry in " + seconds + " s (answers for tokens already checked are"
                        + " kept for a minute and cost nothing)",
                Duration.ofSeconds(seconds)));
    }

    private Authenticated authenticate(String token) {
        TokenReview answer;
        try {
            answer = withDeadline(() -> client.authentication()
                    .v1()
                    .tokenReviews()
                    .create(new TokenReviewBuilder()
                            .withNewSpec()
                            .withToken(token)
                            .withAudiences(AgentProtocol.AUDIENCE)
                            .endSpec()
                            .build()));
        } catch (KubernetesClientException | TimeoutException e) {
            return new Authenticated(
                    null,
                    new Decision.Refused(503, "the agent could not check the token with the API server: " + why(e)));
        }
        if (answer.getStatus() == null
                || !Boolean.TRUE.equals(answer.getStatus().getAuthenticated())
                || answer.getStatus().getUser() == null) {
            String why = answer.getStatus() == null || answer.getStatus().getError() == null
                    ? ""
                    : ": " + UserText.bare(answer.getStatus().getError());
            return new Authenticated(
                    null,
                    new Decision.Refused(
                            401,
                            "the API server does not accept this token for audience " + AgentProtocol.AUDIENCE + why
                                    + " (a token made for the API server, such as a kubeconfig's, is not taken here:"
                                    + " use kubectl drover, which goes through the aggregated API agent.drover.dev)"));
        }
        // A server that ignored spec.audiences (or an authenticator that is audience-agnostic) says nothing of
        // them: such a token may be one meant for the API server, so it is not taken.
        List<String> audiences = answer.getStatus().getAudiences();
        if (audiences == null || !audiences.contains(AgentProtocol.AUDIENCE)) {
            return new Authenticated(
                    null,
                    new Decision.Refused(
                            401,
                            "this API takes only tokens with audience " + AgentProtocol.AUDIENCE
                                    + " (the API server reported "
                                    + (audiences == null || audiences.isEmpty()
                                            ? "none"
                                            : UserText.bare(String.join(", ", audiences)))
                                    + "): use kubectl drover, which goes through the aggregated API"
                                    + " agent.drover.dev, or a token made with kubectl create token --audience "
                                    + AgentProtocol.AUDIENCE));
        }
        return new Authenticated(answer.getStatus().getUser(), null);
    }

    private Decision review(UserInfo user, String namespace, String name, String verb, String subresource) {
        Caller caller = caller(user);
        SubjectAccessReview access;
        try {
            access = withDeadline(() -> client.authorization()
                    .v1()
                    .subjectAccessReview()
                    .create(new SubjectAccessReviewBuilder()
                            .withNewSpec()
                            .withUser(user.getUsername())
                            .withGroups(user.getGroups())
                            .withUid(user.getUid())
                            .withExtra(user.getExtra())
                            .withNewResourceAttributes()
                            .withGroup(AgentProtocol.GROUP)
                            .withResource("allocations")
                            .withSubresource(subresource)
                            .withVerb(verb)
                            .withNamespace(namespace)
                            .withName(name)
                            .endResourceAttributes()
                            .endSpec()
                            .build()));
        } catch (KubernetesClientException | TimeoutException e) {
            return new Decision.Refused(503, "the agent could not check access with the API server: " + why(e));
        }
        if (access.getStatus() == null
                || !Boolean.TRUE.equals(access.getStatus().getAllowed())) {
            String reason = access.getStatus() == null
                            || access.getStatus().getReason() == null
                            || access.getStatus().getReason().isBlank()
                    ? ""
                    : " (" + access.getStatus().getReason() + ")";
            return new Decision.Refused(
                    403,
                    "user \"" + caller.user() + "\" cannot " + verb + " allocations/" + subresource
                            + " in namespace \"" + namespace + "\"" + reason
                            + "; an RBAC rule with verb " + verb + " on resource \"allocations/"
                            + subresource + "\" of group " + AgentProtocol.GROUP + " grants it");
        }
        return new Decision.Allowed(caller);
    }

    /**
     * Runs one review with {@link ApiLimits#reviewTimeout()} to answer: the client's own timeouts and retries
     * would hold the request a minute and more while the API server is away. Past the deadline the call is
     * interrupted, which cancels it and its retries.
     */
    private <T> T withDeadline(Callable<T> review) throws TimeoutException {
        FutureTask<T> task = new FutureTask<>(review);
        Thread.ofVirtual().name("drover-api-review").start(task);
        try {
            return task.get(limits.reviewTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted while waiting for the API server", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KubernetesClientException k) {
                throw k;
            }
            throw new KubernetesClientException(e.getCause().toString(), e.getCause());
        } catch (TimeoutException e) {
            throw new TimeoutException(
                    "no answer within " + limits.reviewTimeout().toMillis() + " ms");
        } finally {
            task.cancel(true);
        }
    }

    static Caller caller(UserInfo user) {
        List<String> nodes = user.getExtra() == null ? null : user.getExtra().get(NODE_NAME_EXTRA);
        String node = nodes != null && nodes.size() == 1 && !nodes.getFirst().isEmpty() ? nodes.getFirst() : null;
        return new Caller(user.getUsername(), user.getGroups() == null ? List.of() : user.getGroups(), node);
    }

    /** Everything a SubjectAccessReview is asked with, as one key (hashed: it may be long). */
    private static String identity(UserInfo user) {
        StringBuilder b = new StringBuilder();
        field(b, user.getUsername());
        field(b, user.getUid());
        List<String> groups = user.getGroups() == null ? List.of() : user.getGroups();
        b.append(groups.size()).append(':');
        groups.forEach(g -> field(b, g));
        Map<String, List<String>> extra = user.getExtra() == null ? Map.of() : new TreeMap<>(user.getExtra());
        b.append(extra.size()).append(':');
        extra.forEach((k, values) -> {
            field(b, k);
            List<String> vs = values == null ? List.of() : values;
            b.append(vs.size()).append(':');
            vs.forEach(v -> field(b, v));
        });
        return hash(b.toString());
    }

    /** A string with its length first, so no two identities make one key. */
    private static void field(StringBuilder b, String s) {
        String value = s == null ? "" : s;
        b.append(value.length()).append(':').append(value);
    }

    private static String why(Exception e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    /** Answers kept until a deadline, the least recently used dropped first past {@code size}. */
    private static final class Expiring<V> {
        private record Kept<V>(V value, Instant until) {}

        private final Map<String, Kept<V>> entries;

        Expiring(int size) {
            entries = new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Kept<V>> eldest) {
                    return size() > size;
                }
            };
        }

        synchronized Optional<V> get(String key, Instant now) {
            Kept<V> e = entries.get(key);
            return e != null && e.until().isAfter(now) ? Optional.of(e.value()) : Optional.empty();
        }

        synchronized void put(String key, V value, Instant until) {
            entries.put(key, new Kept<>(value, until));
        }
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static String hash(String token) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
