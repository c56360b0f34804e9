package dev.drover.httpapi;

import dev.drover.common.UserText;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The followed logs the API serves now, bounded in total, per caller and per namespace of the allocation: each
 * holds a connection and a thread for as long as its task runs, so callers who open follows and walk away could
 * otherwise run the agent out of memory. The namespace bound keeps one namespace, whose owner may mint any number of
 * ServiceAccounts (each a caller), from taking every place.
 */
final class Followers {

    /** A follow being served; closing it frees its place. */
    interface Slot extends AutoCloseable {
        @Override
        void close();
    }

    /** What a caller refused a place is told to wait: others' places free as their tasks end, at any time. */
    static final java.time.Duration RETRY = java.time.Duration.ofSeconds(10);

    /** What is counted, as a message names it, and what else a refused caller may do (or ""). */
    record Counted(String what, String otherwise) {}

    static final Counted FOLLOWS = new Counted("followed logs", ", or read without follow=true");

    /** For exec sessions, which hold a connection and threads as long as a follow: the same bounds, apart. */
    static final Counted EXECS = new Counted("exec sessions", "");

    private final ApiLimits limits;
    private final Counted counted;
    private final Map<String, Integer> byCaller = new HashMap<>();
    private final Map<String, Integer> byNamespace = new HashMap<>();
    private int total;

    Followers(ApiLimits limits) {
        this(limits, FOLLOWS);
    }

    Followers(ApiLimits limits, Counted counted) {
        this.limits = limits;
        this.counted = counted;
    }

    /** A place for one more follow by {@code caller} of an allocation in {@code namespace}, or why there is none. */
    synchronized Admission admit(String caller, String namespace) {
        int mine = byCaller.getOrDefault(caller, 0);
        int inNamespace = byNamespace.getOrDefault(namespace, 0);
        String what = counted.what();
        String refusal;
        if (mine >= limits.maxFollowersPerCaller()) {
            refusal = "user " + UserText.quote(caller) + " already has " + mine + " " + what
                    + " on this agent, the most one caller may (api.maxFollowersPerCaller); end one of them";
        } else if (inNamespace >= limits.maxFollowersPerNamespace()) {
            refusal = "namespace " + UserText.quote(namespace) + " already has " + inNamespace + " " + what
                    + " on this agent, the most one namespace may (api.maxFollowersPerNamespace), whoever the"
                    + " callers; end one of them";
        } else if (total >= limits.maxFollowers()) {
            refusal = "this agent already serves " + total + " " + what
                    + ", the most it serves at once (api.maxFollowers); retry later";
        } else {
            byCaller.merge(caller, 1, Integer::sum);
            byNamespace.merge(namespace, 1, Integer::sum);
            total++;
            return new Admission(Optional.of(slot(caller, namespace)), "");
        }
        return new Admission(Optional.empty(), refusal + counted.otherwise());
    }

    private Slot slot(String caller, String namespace) {
        return new Slot() {
            private boolean closed;

            @Override
            public void close() {
                synchronized (Followers.this) {
                    if (!closed) {
                        closed = true;
                        total--;
                        byCaller.computeIfPresent(caller, (c, n) -> n == 1 ? null : n - 1);
                        byNamespace.computeIfPresent(namespace, (c, n) -> n == 1 ? null : n - 1);
                    }
                }
            }
        };
    }

    /** How many follows are served now. */
    synchronized int count() {
        return total;
    }

    /** A slot, or (when empty) the sentence that says why not. */
    record Admission(Optional<Slot> slot, String refusal) {}
}
