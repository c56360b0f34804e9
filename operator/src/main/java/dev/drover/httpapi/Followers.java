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

    /** What a caller refused a place is told to wait: others' places free as their tasks end, at any time. */
    static final java.time.Duration RETRY = java.time.Duration.ofSeconds(10);

    /** For exec sessions, which hold a connection and threads as long as a follow: the same bounds, apart. */
    static final String EXECS = "exec sessions";

    private final ApiLimits limits;
    private final String what;
    private final Map<String, Integer> byCaller = new HashMap<>();
    private int total;

    Followers(ApiLimits limits) {
        this(limits, "followed logs");
    }

    /** Counts {@code what} (as a message names them: {@code "followed logs"}, {@link #EXECS}). */
    Followers(ApiLimits limits, String what) {
        this.limits = limits;
        this.what = what;
    }

    /** A place for one more follow by {@code caller}, or why there is none. */
    synchronized Admission admit(String caller) {
        int mine = byCaller.getOrDefault(caller, 0);
        if (!what.equals("followed logs")
                && (mine >= limits.maxFollowersPerCaller() || total >= limits.maxFollowers())) {
            return new Admission(
                    Optional.empty(),
                    mine >= limits.maxFollowersPerCaller()
                            ? "user \"" + caller + "\" already has " + mine + " " + what
                                    + " on this agent, the most one caller may (api.maxFollowersPerCaller); end one"
                            : "this agent already serves " + total + " " + what
                                    + ", the most it serves at once (api.maxFollowers); retry later");
        }
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
