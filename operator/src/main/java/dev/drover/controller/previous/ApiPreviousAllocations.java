package dev.drover.controller.previous;

import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskFetcher;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.common.Backoff;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Path;
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
 * or closing this stops it. Its disk comes from the node it ran on, through
 * {@code disks}, which claims it on that node.
 */
public final class ApiPreviousAllocations implements PreviousAllocations, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiPreviousAllocations.class);

    private final KubernetesClient client;
    private final Duration minPoll;
    private final Duration maxPoll;
    private final DiskFetcher disks;
    private final Set<Thread> waiters = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public ApiPreviousAllocations(KubernetesClient client, Duration minPoll, Duration maxPoll, DiskFetcher disks) {
        this.client = client;
        this.minPoll = minPoll;
        this.maxPoll = maxPoll;
        this.disks = disks;
    }

    /** Without fetching disks from other nodes. */
    public ApiPreviousAllocations(KubernetesClient client, Duration minPoll, Duration maxPoll) {
        this(client, minPoll, maxPoll, DiskFetcher.NONE);
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

    @Override
    public DiskFetcher.Fetched fetchDisk(AllocId id, Claimant claimant, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        return disks.fetch(id, claimant, staging, tasks, maxBytes);
    }

    private void poll(AllocId id, CompletableFuture<Void> done) {
        try {
            Backoff wait = Backoff.from(minPoll, maxPoll);
            while (!done.isDone() && !closed) {
                try {
                    Allocation a = client.resources(Allocation.class)
                            .inNamespace(id.namespace())
                            .withName(id.name())
                            .get();
                    if (a == null || terminal(a.getStatus())) {
                        done.complete(null);
                        return;
                    }
                } catch (RuntimeException e) {
                    LOG.warn("cannot read previous allocation {} (will retry): {}", id, e.getMessage());
                }
                Thread.sleep(wait.current());
                wait = wait.next();
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

    private static boolean terminal(AllocationStatus s) {
        return s != null && s.getClientStatus() != null && s.getClientStatus().isTerminal();
    }
}
