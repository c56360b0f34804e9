package dev.drover.controller;

import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Destroys under way, each tried until it is done. A destroy is not done while a task of its allocation may still
 * be alive (its kill keeps failing): the allocation then keeps its directory, stored state and devices (and, while
 * the API server still has it, its finalizer), and its destroy is tried again. Each try waits for the tasks to die
 * (at most the runner's destroy deadline), and tries are {@link #PAUSE} apart; the kill itself is retried by the
 * task's runner with its own back-off. One virtual thread per destroy; {@link #close()} stops them, leaving what is
 * not done to the next agent, which finds it in the state store.
 */
final class Destroys implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Destroys.class);
    static final Duration PAUSE = Duration.ofSeconds(1);

    /** One try: true when the allocation is destroyed, false to try again later. */
    @FunctionalInterface
    interface Attempt {
        boolean destroy() throws InterruptedException;
    }

    private record Running(CompletableFuture<Void> done, Thread thread) {}

    private final Map<AllocId, Running> running = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> closing = new CompletableFuture<>();

    /**
     * Destroys {@code id} by {@code attempt}, again and again until it is done, then runs {@code after} (once the
     * allocation's tasks are dead: what they held may be given to others). Returns the future of the destroy under
     * way for {@code id} if there is one.
     */
    synchronized CompletableFuture<Void> start(AllocId id, Attempt attempt, Runnable after) {
        Running now = running.get(id);
        if (now != null) {
            return now.done();
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (closing.isDone()) {
            return done; // the agent stops: the next one destroys it
        }
        Thread thread = Thread.ofVirtual().name("destroy-" + id).unstarted(() -> retry(id, attempt, after, done));
        running.put(id, new Running(done, thread));
        thread.start();
        return done;
    }

    /** The destroy under way for {@code id}, if any. */
    CompletableFuture<Void> pending(AllocId id) {
        Running now = running.get(id);
        return now == null ? null : now.done();
    }

    private void retry(AllocId id, Attempt attempt, Runnable after, CompletableFuture<Void> done) {
        boolean destroyed = false;
        try {
            while (!closing.isDone()) {
                if (attempt.destroy()) {
                    after.run();
                    destroyed = true;
                    return;
                }
                LOG.warn("allocation {} is not destroyed yet: a task may still be alive", id);
                try {
                    closing.get(PAUSE.toNanos(), TimeUnit.NANOSECONDS);
                } catch (TimeoutException next) {
                    // try again
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | RuntimeException e) {
            LOG.error("destroying allocation {} failed; the next agent tries again", id, e);
        } finally {
            running.remove(id); // first: a later destroy of the same name must not find this finished one
            if (destroyed) {
                done.complete(null);
            }
        }
    }

    /** Whether {@code done} completed within {@code bound}. */
    static boolean await(CompletableFuture<Void> done, Duration bound) throws InterruptedException {
        try {
            done.get(bound.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }

    /** Stops every retry (call after the runners are shut down, so a try under way returns soon); joins them. */
    @Override
    public void close() {
        closing.complete(null);
        for (Running r : running.values()) {
            try {
                r.thread().join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
