package dev.drover.taskrunner.identity;

import dev.drover.credentials.CredentialException;
import dev.drover.credentials.Credentials;
import dev.drover.credentials.ServiceAccountToken;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens already minted, by ServiceAccount, audience and life asked, each used until 80 % of its life has passed (as
 * kubelet renews projected tokens): a thousand allocations of one ServiceAccount cost one TokenRequest, not a
 * thousand. Every token is bound to this node, so sharing one among tasks of the same identity gives none of them
 * more than it had.
 */
final class TokenCache {

    /** Who a token is for and how long it should live. */
    record Key(String namespace, String serviceAccount, String audience, long expirationSeconds) {}

    private record Entry(ServiceAccountToken token, Instant issued, Instant renewAt) {}

    private record Refusal(CredentialException.Reason reason, String message, Instant until) {}

    /**
     * How long a refusal (a namespace not enabled for Drover, a missing ServiceAccount) is answered from here: a
     * thousand tasks starting in such a namespace cost one refused TokenRequest, not a thousand.
     */
    static final Duration REFUSAL_MEMORY = Duration.ofSeconds(30);

    /**
     * A token is renewed no sooner than half its life, up to this, after it was minted, and never sooner than
     * {@link #FLOOR}: real tokens live 10 minutes at least, so a shorter life comes from clocks that disagree, and
     * must not make every use mint a token.
     */
    static final Duration MIN_RENEWAL = Duration.ofSeconds(10);

    static final Duration FLOOR = Duration.ofSeconds(1);

    private final Credentials source;
    private final InstantSource clock;
    private final Map<Key, Entry> tokens = new ConcurrentHashMap<>();
    private final Map<Key, Object> minting = new ConcurrentHashMap<>();
    private final Map<Key, Refusal> refusals = new ConcurrentHashMap<>();

    TokenCache(Credentials source, InstantSource clock) {
        this.source = source;
        this.clock = clock;
    }

    /** A token for {@code key} with at least a fifth of its life left, minted now if the cached one has not. */
    ServiceAccountToken get(Key key) throws CredentialException {
        Entry e = tokens.get(key);
        if (e != null && clock.instant().isBefore(e.renewAt())) {
            return e.token();
        }
        synchronized (minting.computeIfAbsent(key, k -> new Object())) {
            e = tokens.get(key);
            Instant now = clock.instant();
            if (e != null && now.isBefore(e.renewAt())) {
                return e.token();
            }
            Refusal refused = refusals.get(key);
            if (refused != null && now.isBefore(refused.until())) {
                throw new CredentialException(refused.reason(), refused.message());
            }
            ServiceAccountToken minted;
            try {
                minted = source.token(key.namespace(), key.serviceAccount(), key.audience(), key.expirationSeconds());
            } catch (CredentialException failed) {
                if (failed.reason() != CredentialException.Reason.UNAVAILABLE) {
                    refusals.put(key, new Refusal(failed.reason(), failed.getMessage(), now.plus(REFUSAL_MEMORY)));
                }
                throw failed;
            }
            refusals.remove(key);
            tokens.put(key, new Entry(minted, now, renewAt(now, minted.expiry())));
            forgetExpired(now);
            return minted;
        }
    }

    /**
     * When a token minted at {@code issued} is renewed: at 80 % of the life it really got, but not within the
     * {@link #MIN_RENEWAL} floor.
     */
    static Instant renewAt(Instant issued, Instant expiry) {
        Duration life = Duration.between(issued, expiry);
        Instant due =
                life.isNegative() ? issued : issued.plus(life.multipliedBy(4).dividedBy(5));
        Duration wait =
                life.isNegative() || life.dividedBy(2).compareTo(MIN_RENEWAL) > 0 ? MIN_RENEWAL : life.dividedBy(2);
        Instant earliest = issued.plus(wait.compareTo(FLOOR) < 0 ? FLOOR : wait);
        return due.isBefore(earliest) ? earliest : due;
    }

    /**
     * Forgets the token of {@code key} if it was minted more than {@code age} ago: one the API server no longer takes
     * (its ServiceAccount or Node was recreated) is replaced at the next use rather than at its renewal, at most once
     * per {@code age}.
     */
    void forgetIfOlder(Key key, Duration age) {
        Instant now = clock.instant();
        tokens.computeIfPresent(key, (k, e) -> e.issued().plus(age).isBefore(now) ? null : e);
    }

    /** When the token {@link #get} gives for {@code key} is next renewed; null when none is cached. */
    Instant renewAt(Key key) {
        Entry e = tokens.get(key);
        return e == null ? null : e.renewAt();
    }

    private void forgetExpired(Instant now) {
        tokens.entrySet().removeIf(en -> !now.isBefore(en.getValue().token().expiry()));
        refusals.entrySet().removeIf(en -> !now.isBefore(en.getValue().until()));
    }

    int size() {
        return tokens.size();
    }
}
