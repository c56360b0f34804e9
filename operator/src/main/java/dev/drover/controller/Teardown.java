package dev.drover.controller;

import dev.drover.allocrunner.AllocRunner;
import dev.drover.gc.GarbageCollector;
import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends allocations the controller no longer holds: destroys their runners until every task is dead, and only then
 * frees their devices and their share of the node, so no new allocation is given a device a dying task still uses. A new allocation under a
 * name whose old one is still being destroyed waits for it ({@link #awaitOldDestroyed}): they would share the
 * directory and the stored state.
 */
final class Teardown {

    private static final Logger LOG = LoggerFactory.getLogger(Teardown.class);
    /**
     * How long a delete waits for its destroy before it says "not yet": a kill that works takes milliseconds, and the
     * destroy goes on meanwhile on its own thread, so the caller (one of the few reconciler threads) is not held for
     * the whole destroy deadline (2 minutes by default) by tasks that take long to die.
     */
    static final Duration GLANCE = Duration.ofSeconds(1);

    private final ConcurrentMap<AllocId, TrackedAllocation> held;
    private final StartGate gate;
    private final GarbageCollector gc;
    private final Leftovers leftovers;
    private final Duration deadline;
    /** {@link #GLANCE}, or the deadline where that is shorter. */
    private final Duration glance;

    private final Admissions admissions;
    /** Destroys not done yet: a task of theirs may still be alive. */
    private final Destroys destroys = new Destroys();
    /** Runners of destroys under way (no longer held), for an agent that stops meanwhile. */
    private final Set<AllocRunner> dying = ConcurrentHashMap.newKeySet();
    /** UIDs of allocations collected by the garbage collector: terminal, never run again. */
    private final Set<String> collected = ConcurrentHashMap.newKeySet();

    /**
     * @param held     the allocations the controller holds (a collected one leaves them here)
     * @param deadline how long one destroy waits for its tasks' kills ({@code AllocRunnerConfig#destroyDeadline})
     */
    Teardown(
            ConcurrentMap<AllocId, TrackedAllocation> held,
            StartGate gate,
            GarbageCollector gc,
            Leftovers leftovers,
            Duration deadline,
            Admissions admissions) {
        this.held = held;
        this.gate = gate;
        this.gc = gc;
        this.leftovers = leftovers;
        this.deadline = deadline;
        this.glance = deadline.compareTo(GLANCE) < 0 ? deadline : GLANCE;
        this.admissions = admissions;
    }

    /**
     * Destroys the allocation (already no longer held): its start, if one is under way, never runs it; its runner
     * is destroyed until every task is dead, then its devices are freed. Completes when that is done.
     */
    CompletableFuture<Void> destroy(TrackedAllocation t) {
        AllocRunner r = t.release();
        gate.cancel(t.id);
        gc.forget(t.id.key());
        if (r == null) {
            admissions.forget(t.id); // devices reserved at admission, if it got that far: its stored state goes next
            leftovers.remove(t.id);
            return CompletableFuture.completedFuture(null);
        }
        return destroyUntilDead(t.id, r);
    }

    /**
     * The allocation {@code id} is deleted ({@code t}: what the controller held of it, or null): destroys it, or
     * looks at the destroy under way, or removes what is left of it. Returns whether that is done, within a
     * {@link #GLANCE}; false while a task of it may still be alive.
     */
    boolean deleted(AllocId id, TrackedAllocation t) throws InterruptedException {
        CompletableFuture<Void> destroyed = t != null ? destroy(t) : destroys.pending(id);
        if (destroyed == null) {
            leftovers.removeNow(id);
        } else if (!Destroys.await(destroyed, glance)) {
            // the destroy says so itself when a try of it fails (Destroys)
            LOG.debug("allocation {}: its tasks are not all dead yet; its finalizer stays until they are", id);
            return false;
        }
        return true;
    }

    /** Whether {@code done} completed within the destroy deadline. */
    boolean await(CompletableFuture<Void> done) throws InterruptedException {
        return Destroys.await(done, deadline);
    }

    /** Throws (JOSDK tries the reconcile again later) while an earlier allocation named {@code id} is being destroyed. */
    void awaitOldDestroyed(AllocId id) throws InterruptedException {
        CompletableFuture<Void> old = destroys.pending(id);
        if (old != null && !await(old)) {
            throw new IllegalStateException("allocation " + id + " cannot start yet: an earlier allocation of that"
                    + " name is still being destroyed (a task of it may still be alive)");
        }
    }

    /** Collected by the garbage collector: terminal, so destroyed here; the API object stays as it is. */
    void collect(TrackedAllocation t) throws InterruptedException {
        if (held.remove(t.id, t)) {
            if (t.uid != null) {
                collected.add(t.uid);
            }
            AllocRunner r = t.release();
            if (r != null && !await(destroyUntilDead(t.id, r))) {
                LOG.warn("collecting allocation {}: a task may still be alive; tried again until it is dead", t.id);
                return;
            }
            LOG.info("collected terminal allocation {}", t.id);
        }
    }

    /** Whether the allocation of {@code uid} was collected here: it is never run again. */
    boolean collected(String uid) {
        return collected.contains(uid);
    }

    private CompletableFuture<Void> destroyUntilDead(AllocId id, AllocRunner r) {
        dying.add(r);
        return destroys.start(id, r::destroy, () -> {
            // its stored state, which held its reservations, is gone: so are they, and its share, once no task of it
            // can use the node any more
            admissions.forget(id);
            dying.remove(r);
            leftovers.noteIfLeft(id);
        });
    }

    /**
     * For an agent that stops: the runners of {@code held} and of destroys under way stop (their tasks keep
     * running), then the destroys return at once, nothing removed. Joins every runner's threads.
     */
    void shutdown(Collection<TrackedAllocation> held) throws InterruptedException {
        List<AllocRunner> all = new ArrayList<>(dying);
        held.stream().map(TrackedAllocation::runner).filter(Objects::nonNull).forEach(all::add);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (AllocRunner r : all) {
                pool.submit(() -> {
                    r.shutdown();
                    return null;
                });
            }
        }
        destroys.close(); // after the runners: a destroy under way then returns at once
    }
}
