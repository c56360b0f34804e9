package dev.drover.controller;

import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocState;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.devices.DeviceLedger;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StoredAllocation;
import dev.drover.state.StoredLoad;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent's start: rebuilds runners from the state store ({@link #restore}) and reattaches their running tasks at
 * once, supervised again before the API server is listed; nothing else of theirs runs (no start, no restart) until
 * the API server confirms their allocation. Once it is listed, destroys those it no longer has ({@link #sweep}), so
 * a task that died while the agent was away restarts only for an allocation that still wants to run.
 */
final class Restorer {

    private static final Logger LOG = LoggerFactory.getLogger(Restorer.class);
    /**
     * The longest the agent waits for its reattaches before it lists the API server: the list (TLS, JSON, a first
     * reconcile of each) would otherwise take the CPU that supervising the running tasks again needs first.
     */
    static final Duration REATTACH_WAIT = Duration.ofSeconds(30);

    private final StateDB db;
    private final DeviceLedger ledger;
    private final ConcurrentMap<AllocId, TrackedAllocation> held;
    private final RunnerFactory runners;
    private final Function<TrackedAllocation, AllocStateListener> listeners;
    private final Teardown teardown;
    private final Leftovers leftovers;
    private final Admissions admissions;
    private final Consumer<TrackedAllocation> reattached;

    /**
     * @param ledger    the node's device reservations, or null
     * @param listeners  the listener of a tracked allocation's runner
     * @param reattached told of a restored allocation once each of its running tasks was reattached or not
     */
    Restorer(
            StateDB db,
            DeviceLedger ledger,
            ConcurrentMap<AllocId, TrackedAllocation> held,
            RunnerFactory runners,
            Function<TrackedAllocation, AllocStateListener> listeners,
            Teardown teardown,
            Leftovers leftovers,
            Admissions admissions,
            Consumer<TrackedAllocation> reattached) {
        this.db = db;
        this.ledger = ledger;
        this.held = held;
        this.runners = runners;
        this.listeners = listeners;
        this.teardown = teardown;
        this.leftovers = leftovers;
        this.admissions = admissions;
        this.reattached = reattached;
    }

    /**
     * Rebuilds runners from what the state store holds ({@code load}), as many at once as the machine has cores, each
     * reattaching its running tasks on its own thread as soon as it is rebuilt (nothing is started); admits those not
     * over to the node before anything new, and waits until each reattach was tried. Returns how many were restored.
     */
    int restore(StoredLoad load) {
        List<StoredAllocation> all = load.await();
        if (ledger != null) {
            ledger.restore(all);
        }
        List<Rebuilt> rebuilt = all.parallelStream()
                .map(this::rebuild)
                .filter(Objects::nonNull)
                .map(this::reattach)
                .toList();
        Map<AllocId, Allocation> notOver = new HashMap<>();
        Map<AllocId, Map<String, Integer>> ports = new HashMap<>();
        List<CompletableFuture<Void>> reattaches = new ArrayList<>();
        for (Rebuilt r : rebuilt) {
            if (!r.over()) {
                notOver.put(r.stored().id(), r.stored().spec().orElseThrow());
                ports.put(r.stored().id(), r.stored().ports());
            }
            r.reattached().ifPresent(reattaches::add);
        }
        admissions.restored(notOver, ports);
        awaitReattached(reattaches);
        LOG.info("restored {} allocation(s) from the state store", rebuilt.size());
        return rebuilt.size();
    }

    /**
     * A runner rebuilt from the store, held as {@code t}.
     *
     * @param over       whether its allocation was over (terminal, every task dead) as stored
     * @param reattached completes once its running tasks were reattached (or not) and that was told; empty when it
     *                   had none to reattach
     */
    private record Rebuilt(
            TrackedAllocation t, StoredAllocation stored, boolean over, Optional<CompletableFuture<Void>> reattached) {}

    /** Reattaches the rebuilt allocation's running tasks, on the runner's own thread. */
    private Rebuilt reattach(Rebuilt r) {
        TrackedAllocation t = r.t();
        return new Rebuilt(
                t, r.stored(), r.over(), t.runner().reattach().map(tried -> tried.thenRun(() -> reattached.accept(t))));
    }

    /**
     * The allocation's runner rebuilt from the store and held (its tasks not reattached yet); null when it cannot be
     * (then it is taken on again from the API server, or removed when it has no spec at all).
     */
    private Rebuilt rebuild(StoredAllocation stored) {
        if (stored.spec().isEmpty() && stored.damaged()) {
            // Its spec could not be read (quarantined): taken on again from the API server, directory kept,
            // so a task still running there is taken over rather than started twice.
            LOG.warn("allocation {} lost its stored spec; it is taken on again from the API server", stored.id());
            leftovers.unrestored(stored.id(), stored.tasks().values());
            return null;
        }
        if (stored.spec().isEmpty()) {
            LOG.warn("stored allocation {} has no spec (a crash while it was created); removing it", stored.id());
            if (ledger != null) {
                ledger.forget(stored.id()); // reserved at admission, before the spec was stored
            }
            leftovers.removeNow(stored.id());
            return null;
        }
        // the runner's own snapshot (read from the store for it, never changed): read here, not copied
        Allocation spec = stored.spec().get();
        String uid = spec.getMetadata() == null ? null : spec.getMetadata().getUid();
        TrackedAllocation t = TrackedAllocation.restoring(stored.id(), uid);
        held.put(stored.id(), t);
        try {
            AllocRunner runner = runners.restore(stored, listeners.apply(t));
            t.restoredWith(runner, spec);
            AllocState state = runner.allocState();
            return new Rebuilt(t, stored, state.clientStatus().isTerminal() && state.allDead(), Optional.empty());
        } catch (RuntimeException ex) {
            // As for an entry that cannot be read: its directory stays (a running task there is taken over),
            // and the API server's copy is taken on again; a leftover is swept once the API server is listed.
            LOG.error(
                    "cannot restore allocation {} from the state store; it is taken on again from the API server:"
                            + " {}",
                    stored.id(),
                    ex.toString());
            held.remove(stored.id(), t);
            leftovers.unrestored(stored.id(), stored.tasks().values());
            return null;
        }
    }

    /** Waits, at most {@link #REATTACH_WAIT}, until each reattach was tried and its status built. */
    private static void awaitReattached(List<CompletableFuture<Void>> reattaches) {
        try {
            CompletableFuture.allOf(reattaches.toArray(CompletableFuture[]::new))
                    .get(REATTACH_WAIT.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("reattaching the restored tasks takes over {}; the API server is listed meanwhile", REATTACH_WAIT);
        } catch (ExecutionException e) {
            LOG.warn("reattaching the restored tasks: {}", e.getCause().toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Destroys restored allocations the API server no longer has ({@code present} is what it lists for this node,
     * read after the watch started), and what they and others left on disk. Returns how many were destroyed.
     */
    int sweep(Collection<Allocation> present) throws InterruptedException {
        Set<String> uids = ConcurrentHashMap.newKeySet();
        present.forEach(a -> uids.add(a.getMetadata().getUid()));
        List<TrackedAllocation> gone = new ArrayList<>();
        for (TrackedAllocation t : held.values()) {
            if (!t.confirmed() && !uids.contains(t.uid) && held.remove(t.id, t)) {
                gone.add(t);
            }
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (TrackedAllocation t : gone) {
                LOG.info("allocation {} is gone from the API server; destroying it", t.id);
                pool.submit(() -> teardown.await(teardown.destroy(t)));
            }
        }
        Set<AllocId> listed = ConcurrentHashMap.newKeySet();
        present.forEach(a -> {
            try {
                listed.add(new AllocId(
                        a.getMetadata().getNamespace(), a.getMetadata().getName()));
            } catch (IllegalArgumentException unusable) {
                // never had a directory here
            }
        });
        leftovers.listed(listed);
        return gone.size();
    }
}
