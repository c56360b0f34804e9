package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.taskrunner.restarts.Outcome;
import dev.drover.taskrunner.restarts.RestartDecision;
import dev.drover.taskrunner.restarts.RestartTracker;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What follows the end of a task's run: the restart tracker's decision, recorded as an event, and for a restart the
 * wait before the next start. That wait is the restart's delay, and at least {@link #MIN_SPACING} after the task's
 * last start, so that a task failing at once with {@code delay: 0s} starts at most a hundred times a second and costs
 * its agent a bounded share of a core. A kill or a shutdown ends the wait; a change the publisher holds
 * ({@link PublishPacing}) is published when it falls due meanwhile. Runner thread only.
 */
final class RestartStep {

    /** The least time between two starts of one task. */
    static final Duration MIN_SPACING = Duration.ofMillis(10);

    private final TaskStatePublisher state;
    private final InstantSource clock;
    private final CompletableFuture<?> kill;
    private final CompletableFuture<?> shutdown;
    /** When the task last started (nanoTime); none yet: far enough back. */
    private long startedNanos = Long.MIN_VALUE / 2;

    RestartStep(
            TaskStatePublisher state, InstantSource clock, CompletableFuture<?> kill, CompletableFuture<?> shutdown) {
        this.state = state;
        this.clock = clock;
        this.kill = kill;
        this.shutdown = shutdown;
    }

    /** The task started now. */
    void started() {
        startedNanos = System.nanoTime();
    }

    /**
     * Asks {@code tracker} what follows {@code outcome}, records it (its message led by {@code cause}, a failing
     * check's words, when there is one) and waits a restart's delay. True when the task is to start again; false when
     * it is done for good, killed meanwhile, or the runner shuts down (the state then stored).
     */
    boolean next(RestartTracker tracker, Outcome outcome, String cause) throws InterruptedException {
        RestartDecision d = tracker.decide(outcome);
        String message = cause == null ? d.reason() : cause + "; " + d.reason();
        switch (d.kind()) {
            case RESTART -> {
                state.event(TaskEvent.of(TaskEventType.Restarting, clock.instant())
                        .withStartDelay(d.delay())
                        .withRestartReason(d.reason())
                        .withMessage(message));
                state.pending();
                if (await(d.delay())) {
                    return true;
                }
                if (shutdown.isDone() && !kill.isDone()) {
                    state.store();
                    return false;
                }
                state.dead(false); // killed while waiting to restart: nothing runs, nothing to kill
                return false;
            }
            case NOT_RESTARTING -> {
                state.event(TaskEvent.of(TaskEventType.NotRestarting, clock.instant())
                        .withRestartReason(d.reason())
                        .withMessage(message));
                state.dead(true);
                return false;
            }
            default -> {
                state.dead(false);
                return false;
            }
        }
    }

    /** Waits {@code delay} (and out the spacing); true when it passed, false when a kill or shutdown ended it. */
    private boolean await(Duration delay) throws InterruptedException {
        long now = System.nanoTime();
        long until = Math.max(now + delay.toNanos(), startedNanos + MIN_SPACING.toNanos());
        while (true) {
            CompletableFuture<Object> woken = CompletableFuture.anyOf(kill, shutdown, state.due());
            try {
                woken.get(until - now, TimeUnit.NANOSECONDS);
            } catch (TimeoutException passed) {
                // ended, so that the futures it waited on, which outlive this wait, let go of it
                woken.cancel(false);
                return true;
            } catch (ExecutionException heldTakenMeanwhile) {
                // the due future was cancelled: the held change went out with another
            }
            if (kill.isDone() || shutdown.isDone()) {
                return false;
            }
            state.flush();
            now = System.nanoTime();
        }
    }
}
