package dev.drover.taskrunner;

import java.util.concurrent.CompletableFuture;

/**
 * The restarts asked of a running task, from other threads (an update, a user, a changed Secret, a failing check): the
 * first one asked is taken by the runner's watch of the task's process, which then kills and restarts it.
 */
final class RestartRequests {

    /**
     * One restart asked for: {@code failure} counts it against the restart policy (a failing check), and its reason
     * then leads the {@code Restarting} or {@code NotRestarting} event.
     */
    record Ask(String reason, boolean failure) {}

    private CompletableFuture<Ask> next = new CompletableFuture<>();

    /** Asks for a restart; a restart already asked for and not taken yet stays the one done. */
    void ask(String reason, boolean failure) {
        pending().complete(new Ask(reason, failure));
    }

    /** What the watch of one run waits on. */
    synchronized CompletableFuture<Ask> pending() {
        return next;
    }

    /** The watch took {@code asked}: later asks are for the next run. */
    synchronized void taken(CompletableFuture<Ask> asked) {
        if (next == asked) {
            next = new CompletableFuture<>();
        }
    }

    /**
     * A start is about to happen: an ask made before it (a second update while the first one's restart was under way,
     * or a changed Secret noticed just as the task exited) is done by this very start; left pending, it would kill the
     * new run at once.
     */
    synchronized void startingNow() {
        if (next.isDone()) {
            next = new CompletableFuture<>();
        }
    }
}
