package dev.drover.taskrunner.checks;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock and the one thread that checks' probes are scheduled on: {@link #threaded} for the agent; tests drive a
 * timer of their own, so that they need not wait for real intervals. Actions run one at a time and must be short: they
 * start probes on threads of their own, never probe themselves.
 */
interface CheckTimer extends AutoCloseable {

    /** Now, in nanoseconds of an arbitrary origin, as {@link System#nanoTime()}. */
    long nanoTime();

    /** Runs {@code action} on the timer's thread once {@code delayNanos} have passed; nothing once closed. */
    Scheduled schedule(Runnable action, long delayNanos);

    /** Drops every scheduled action and ends the timer's thread, waiting for it. */
    @Override
    void close();

    /** An action scheduled. */
    @FunctionalInterface
    interface Scheduled {
        /** Drops the action if it has not run yet. */
        void cancel();
    }

    /** A timer on one daemon platform thread named {@code name}, started with the first action. */
    static CheckTimer threaded(String name) {
        return new Threaded(name);
    }

    /** A timer on a single-thread scheduled executor. */
    final class Threaded implements CheckTimer {

        private static final Logger LOG = LoggerFactory.getLogger(CheckTimer.class);
        private static final Duration JOIN_BOUND = Duration.ofSeconds(10);

        private final ScheduledThreadPoolExecutor executor;

        private Threaded(String name) {
            executor = new ScheduledThreadPoolExecutor(
                    1, r -> Thread.ofPlatform().name(name).daemon(true).unstarted(r));
            executor.setRemoveOnCancelPolicy(true); // 2000 checks' cancelled ticks would otherwise stay queued
            executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public Scheduled schedule(Runnable action, long delayNanos) {
            try {
                ScheduledFuture<?> future = executor.schedule(
                        () -> {
                            try {
                                action.run();
                            } catch (RuntimeException | Error e) {
                                // A thrown action would otherwise vanish into its future, unseen.
                                LOG.error("a health check's scheduled action failed", e);
                            }
                        },
                        Math.max(0, delayNanos),
                        TimeUnit.NANOSECONDS);
                return () -> future.cancel(false);
            } catch (RejectedExecutionException e) {
                return () -> {}; // closed: nothing runs any more
            }
        }

        @Override
        public void close() {
            executor.shutdownNow();
            try {
                if (!executor.awaitTermination(JOIN_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("the health checks' timer did not stop within {} s; leaving it", JOIN_BOUND.toSeconds());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
