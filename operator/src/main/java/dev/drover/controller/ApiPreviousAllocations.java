package dev.drover.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.allocwatcher.DiskFetcher;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.common.Backoff;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
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
 * {@code disks}.
 *
 * <p>Claims of a previous allocation's disk are the annotation
 * {@value #CLAIM} on that allocation, {@code NAME/UID} of the successor,
 * written by a merge patch that carries the resourceVersion just read: the API
 * server applies it only to that version, so of two successors racing, one
 * wins and the other reads the winner's claim. The claim lives as long as the
 * previous allocation, across agent restarts and nodes.
 */
public final class ApiPreviousAllocations implements PreviousAllocations, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiPreviousAllocations.class);
    /** The annotation on a previous allocation that names the successor its disk is carried to. */
    public static final String CLAIM = "drover.dev/disk-claimed-by";
    /** Lost races before giving up: each one means another writer changed the allocation meanwhile. */
    private static final int CLAIM_ATTEMPTS = 5;

    private static final ObjectMapper JSON = new ObjectMapper();

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
    public DiskFetcher.Fetched fetchDisk(AllocId id, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        return disks.fetch(id, staging, tasks, maxBytes);
    }

    @Override
    public void claimDisk(AllocId previous, Claimant claimant) throws IOException {
        for (int attempt = 1; ; attempt++) {
            Allocation a;
            try {
                a = allocations(previous).get();
            } catch (KubernetesClientException e) {
                throw new IOException(
                        "cannot read previous allocation " + previous + " to claim its disk: " + e.getMessage(), e);
            }
            if (a == null) {
                throw new IOException("previous allocation " + previous + " is gone, and its disk with it");
            }
            Map<String, String> annotations = a.getMetadata().getAnnotations();
            String holder = annotations == null ? null : annotations.get(CLAIM);
            if (claimant.value().equals(holder)) {
                return; // ours: claimed before an agent restart, or by an earlier try
            }
            if (holder != null) {
                throw new DiskClaimedException(previous.name(), Claimant.nameOf(holder));
            }
            ObjectNode patch = JSON.createObjectNode();
            ObjectNode meta = patch.putObject("metadata");
            meta.put("resourceVersion", a.getMetadata().getResourceVersion());
            meta.putObject("annotations").put(CLAIM, claimant.value());
            try {
                allocations(previous).patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    throw new IOException("previous allocation " + previous + " is gone, and its disk with it");
                }
                if (e.getCode() != 409 || attempt >= CLAIM_ATTEMPTS) {
                    throw new IOException(
                            "cannot claim the disk of previous allocation " + previous + ": " + e.getMessage(), e);
                }
                // it changed since we read it: read again, perhaps another successor's claim
            }
        }
    }

    private Resource<Allocation> allocations(AllocId id) {
        return client.resources(Allocation.class).inNamespace(id.namespace()).withName(id.name());
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
                    if (a == null || AllocationStatuses.isTerminal(a.getStatus())) {
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
}
