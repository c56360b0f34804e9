package dev.drover.httpapi;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The followed logs the API serves now, bounded in total and per caller: each
 * holds a connection and a thread for as long as its task runs, so callers who
 * open follows and walk away could otherwise run the agent out of memory.
 */
final class Followers {

    /** A follow being served; closing it frees its place. */
    interface Slot extends AutoCloseable {
        @Override
        void close();
    }

    private final ApiLimits limits;
    private final Map<String, Integer> byCaller = new HashMap<>();
    private int total;

    Followers(ApiLimits limits) {
        this.limits = limits;
    }

    /** A place for one more follow by {@code caller}, or why there is none. */
    synchronized Admission admit(String caller) {
        int mine = byCaller.getOrDefault(caller, 0);
        if (mine >= limits.maxFollowersPerCaller()) {
            return new Admission(
                    Optional.empty(),
                    "user \"" + caller + "\" already follows " + mine
                            + " logs on this agent, the most one caller may (api.maxFollowersPerCaller); end one of them,"
                            + " or read without follow=true");
        }
        if (total >= limits.maxFollowers()) {
            return new Admission(
                    Optional.empty(),
                    "this agent already serves " + total
                            + " followed logs, the most it serves at once (api.maxFollowers); retry later, or read without"
                            + " follow=true");
        }
        byCaller.put(caller, mine + 1);
        total++;
        return new Admission(
                Optional.of(new Slot() {
                    private boolean closed;

                    @Override
                    public void close() {
                        synchronized (Followers.this) {
                            if (!closed) {
                                closed = true;
                                total--;
                                byCaller.computeIfPresent(caller, (c, n) -> n == 1 ? null : n - 1);
                            }
                        }
                    }
                }),
                "");
    }

    /** How many follows are served now. */
    synchronized int count() {
        return total;
    }

    /** A slot, or (when empty) the sentence that says why not. */
    record Admission(Optional<Slot> slot, String refusal) {}
}
