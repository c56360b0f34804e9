package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How often a task restarting quickly has its state published (stored, then told to its listener): at most once per
 * {@link #WINDOW}. A change within the window of the last publish is held, its event kept for the next publish, which
 * takes the state as it is then and hands on every event held, oldest first. A task restarting a hundred times a
 * second then costs a few store writes and status builds a second instead of four per restart, and what is published
 * (state, restart count, the newest events) is what it would have been. A task that never restarted, or whose run
 * lasted longer than the window, publishes every change at once: an allocation's start, and an ordinary restart, are
 * not slowed.
 *
 * <p>A task's setup before it ever started (its {@code TaskSetup} events, after {@code Received} went out) is held too
 * ({@link #holdSetup}), at most {@link #SETUP_WINDOW}: it goes out with the task's start, its failure or its end, so
 * a task that starts at once costs two store writes and status builds instead of four; one whose setup takes longer
 * (an image to pull) is shown setting up a quarter of a second after it began. Not thread-safe: its publisher guards
 * it.
 */
final class PublishPacing {

    /** At most four publishes a second per restarting task, as its allocation gets at most four status writes. */
    static final Duration WINDOW = Duration.ofMillis(250);

    /** The longest a task's changes before its first start wait to go out with it. */
    static final Duration SETUP_WINDOW = Duration.ofMillis(250);

    private final List<TaskEvent> held = new ArrayList<>();
    /** When the last publish went out (nanoTime); none yet: far enough back. */
    private long lastNanos = Long.MIN_VALUE / 2;
    /** When the task last started (nanoTime); none yet: far enough back. */
    private long startedNanos = Long.MIN_VALUE / 2;
    /**
     * Completes when a held change is due, one held only after it was handed out included: a wait that began with
     * nothing held still ends when a change held meanwhile falls due. Replaced, the old one cancelled, when a hold
     * ends.
     */
    private CompletableFuture<Void> due = new CompletableFuture<>();

    private boolean holding;

    /** The task started at {@code nanos}. */
    void started(long nanos) {
        startedNanos = nanos;
    }

    /**
     * A change now, with its event (null for none): true when it is held, false when it is to be published now (then
     * {@link #take} gives the events to hand on).
     *
     * @param restarted whether the task has restarted: only then is a change held (false for one published now
     *     whatever the pacing says, e.g. the task's end)
     */
    boolean hold(TaskEvent event, boolean restarted, long nowNanos) {
        if (event != null) {
            held.add(event);
        }
        long window = WINDOW.toNanos();
        long left = lastNanos + window - nowNanos;
        if (!restarted || left <= 0 || nowNanos - startedNanos >= window) {
            return false;
        }
        if (!holding) {
            holding = true;
            due.completeOnTimeout(null, left, TimeUnit.NANOSECONDS);
        }
        return true;
    }

    /**
     * A change before the task's first start, with its event: held for the next publish, at most
     * {@link #SETUP_WINDOW}. Returns true when this began a hold: no runner waits on {@link #due} before its task
     * started, so the caller sees that the held change is published once due.
     */
    boolean holdSetup(TaskEvent event) {
        held.add(event);
        if (holding) {
            return false;
        }
        holding = true;
        due.completeOnTimeout(null, SETUP_WINDOW.toNanos(), TimeUnit.NANOSECONDS);
        return true;
    }

    /** Whether a change is held, to be published by {@link #take} at the latest when {@link #due} completes. */
    boolean holding() {
        return holding;
    }

    /**
     * Completes when a held change is due, whether held now or later; cancelled when a publish took what was held
     * first (ask again then).
     */
    CompletableFuture<Void> due() {
        return due;
    }

    /** A publish goes out now: the events held (oldest first), the hold ended. */
    List<TaskEvent> take(long nowNanos) {
        lastNanos = nowNanos;
        if (holding) {
            holding = false;
            due.cancel(false);
            due = new CompletableFuture<>();
        }
        if (held.isEmpty()) {
            return List.of();
        }
        List<TaskEvent> out = List.copyOf(held);
        held.clear();
        return out;
    }
}
