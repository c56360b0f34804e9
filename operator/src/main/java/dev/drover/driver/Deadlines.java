package dev.drover.driver;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bounds every wait on a driver. A call runs on its own virtual thread; the
 * caller waits at most the deadline, then interrupts the call and moves on. A
 * driver that ignores the interrupt keeps only its own (cheap, virtual)
 * thread, never the caller.
 */
public final class Deadlines {

    private Deadlines() {}

    /** The driver took longer than its deadline. */
    public static final class DeadlineExceeded extends Exception {
        public DeadlineExceeded(String message) {
            super(message);
        }
    }

    /**
     * Runs {@code call}, waiting at most {@code deadline}. Exceptions of the call
     * are rethrown as they are (checked ones wrapped in {@link ExecutionException}).
     */
    public static <T> T call(String what, Duration deadline, Callable<T> call)
            throws DeadlineExceeded, ExecutionException, InterruptedException {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread worker = Thread.ofVirtual().name("driver-call").start(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        try {
            return result.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            worker.interrupt();
            throw new DeadlineExceeded(what + " did not finish within " + dev.drover.common.Durations.format(deadline));
        } catch (InterruptedException e) {
            worker.interrupt();
            throw e;
        }
    }

    /** Waits for {@code future} at most {@code deadline}; the future is left running on timeout. */
    public static <T> T await(String what, Duration deadline, CompletableFuture<T> future)
            throws DeadlineExceeded, ExecutionException, InterruptedException {
        try {
            return future.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new DeadlineExceeded(what + " did not finish within " + dev.drover.common.Durations.format(deadline));
        } catch (CancellationException e) {
            throw new ExecutionException(what + " was cancelled", e);
        }
    }
}
