package dev.drover.controller;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for a previous allocation that ran on another node: reads it from the
 * API server until its status is terminal or it is gone. Reads back off from
 * {@code minPoll} to {@code maxPoll}; an unreachable API server is retried, not
 * taken as "gone". One virtual thread per wait; cancelling the returned future
 * or closing this stops it.
 */
public final class ApiPreviousAllocations implements PreviousAllocations, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiPreviousAllocations.class);

    private final KubernetesClient client;
    private final Duration minPoll;
    private final Duration maxPoll;
    private final Set<Thread> waiters = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public ApiPreviousAllocations(KubernetesClient client, Duration minPoll, Duration maxPoll) {
        this.client = client;
        this.minPoll = minPoll;
        this.maxPoll = maxPoll;
    }

    @Override
    public CompletableFuture<Void> terminal(AllocId id) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().name("previous-alloc-" + id).unstarted(() -> poll(id, done));
        waiters.add(t);
        done.whenComplete((v, e) -> t.interrupt());
        t.start();
        return done;
    }

    private void poll(AllocId id, CompletableFuture<Void> done) {
        try {
            Duration wait = minPoll;
            while (!done.isDone() && !closed) {
                try {
                    Allocation a = client.resources(Allocation.class).inNamespace(id.namespace()).withName(id.name()).get();
                    if (a == null || AllocationStatuses.isTerminal(a.getStatus())) {
                        done.complete(null);
                        return;
                    }
                } catch (RuntimeException e) {
                    LOG.warn("cannot read previous allocation {} (will retry): {}", id, e.getMessage());
                }
                Thread.sleep(wait);
                wait = wait.multipliedBy(2).compareTo(maxPoll) > 0 ? maxPoll : wait.multipliedBy(2);
            }
        } catch (InterruptedException e) {
            // cancelled or closing
        } finally {
            waiters.remove(Thread.currentThread());
        }
    }

    /** Waits in progress (each is one thread). */
    int waiting() {
        return waiters.size();
    }

    /** Stops every wait and joins its thread; pending futures are left incomplete. */
    @Override
    public void close() {
        closed = true;
        for (Thread t : Set.copyOf(waiters)) {
            t.interrupt();
        }
        for (Thread t : Set.copyOf(waiters)) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
