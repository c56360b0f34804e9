package dev.drover.controller;

import dev.drover.allocrunner.AllocDir;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocrunner.AllocState;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.common.UserText;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.validation.AllocationValidator;
import dev.drover.api.validation.Violation;
import dev.drover.devices.DeviceLedger;
import dev.drover.gc.Collectable;
import dev.drover.gc.GarbageCollector;
import dev.drover.logging.LogThrottle;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredAllocation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's allocations: creates, updates and destroys alloc runners as the
 * API server's Allocations come and go, and turns what runners publish into
 * statuses (through the {@link StatusWriter}), Kubernetes Events and metrics.
 *
 * <p>It acts only on allocations whose {@code spec.nodeName} is this node,
 * whatever the watch delivered. On start, {@link #restore()} rebuilds runners
 * from the state store before anything else; they wait, without running, until
 * the API server confirms their allocation ({@link #reconcile}) or shows it is
 * gone ({@link #sweep}), so a task that died while the agent was away restarts
 * only for an allocation that still wants to run.
 */
public final class AllocationController implements AllocStateListener {

    private static final Logger LOG = LoggerFactory.getLogger(AllocationController.class);
    /** The longest one allocation keeps a start slot (it may wait on a previous allocation, or a long prestart). */
    static final Duration START_HOLD = Duration.ofSeconds(2);
    /** Kubernetes Event reasons of the state store's failure and recovery (a full disk), as the condition's. */
    private static final String STATE_STORE_FAILED = AllocationStatuses.STATE_STORE_FAILED;
    private static final String STATE_STORED = AllocationStatuses.STATE_STORED;
    /** A directory that cannot be removed is retried every GC pass: one line per allocation and hour. */
    private static final LogThrottle LEFTOVER_FAILURES = new LogThrottle(Duration.ofHours(1));

    /** What the controller keeps per allocation. Fields are guarded by the entry itself. */
    private static final class Entry {
        final AllocId id;
        final String uid;
        /** A metadata-only copy of the allocation, for Events. */
        Allocation owner;
        volatile AllocRunner runner;
        List<Task> tasks;
        long generation;
        List<Violation> problems = List.of();
        AllocationStatus built;
        long builtVersion = -1;
        /** Restored from the store and not yet confirmed by the API server: not run, nothing written. */
        volatile boolean confirmed;
        /** When the agent first saw it (nanoTime), for the seen→running histogram; 0 for restored ones. */
        long seenNanos;
        boolean wasRunning;
        volatile Instant terminalSince;
        /** The newest copy seen while the allocation waits to be taken on (or is being started). */
        Allocation latest;
        /** Deleted (or replaced): a start under way must not leave a runner behind. */
        boolean gone;
        /** Not taken on because the store could not write its spec: taken on once it has (see stateStored). */
        volatile Allocation waitingForStore;
        /** Some of its state waits to be written again (StateStored=False reported). */
        boolean storeFailing;

        Entry(AllocId id, String uid) {
            this.id = id;
            this.uid = uid;
        }
    }

    private final String node;
    private final AllocRunnerConfig cfg;
    private final StatusWriter writer;
    private final EventRecorder events;
    private final DroverMetrics metrics;
    private final GarbageCollector gc;
    private final DeviceLedger ledger;
    private final InstantSource clock;
    private final Map<AllocId, Entry> entries = new ConcurrentHashMap<>();
    /** UIDs of allocations collected by the garbage collector: terminal, never run again. */
    private final Set<String> collected = ConcurrentHashMap.newKeySet();
    /** Allocations destroyed (or never known) whose directory is still on disk, swept by {@link #sweepLeftovers}. */
    private final Set<AllocId> leftovers = ConcurrentHashMap.newKeySet();
    /** Stored allocations {@link #restore} could not rebuild: taken on from the API server, else left over. */
    private final Set<AllocId> unrestored = ConcurrentHashMap.newKeySet();
    private final StartGate gate;
    /** Destroys not done yet: a task of theirs may still be alive. */
    private final Destroys destroys = new Destroys();
    /** Runners of destroys under way (no longer among the entries), for an agent that stops meanwhile. */
    private final Set<AllocRunner> dying = ConcurrentHashMap.newKeySet();

    /**
     * @param runnerConfig the runners' configuration, given this controller (their listener, and where a
     *                     previous allocation on this node is found)
     * @param ledger       the node's device reservations, or null when the agent runs no device plugins
     */
    public AllocationController(String node, Function<AllocationController, AllocRunnerConfig> runnerConfig,
                                StatusWriter writer, EventRecorder events, DroverMetrics metrics, GarbageCollector gc,
                                DeviceLedger ledger) {
        this(node, runnerConfig, writer, events, metrics, gc, ledger, 0);
    }

    /**
     * @param concurrentStarts new allocations taken on at once at most ({@link StartGate}); 0 for no bound
     */
    public AllocationController(String node, Function<AllocationController, AllocRunnerConfig> runnerConfig,
                                StatusWriter writer, EventRecorder events, DroverMetrics metrics, GarbageCollector gc,
                                DeviceLedger ledger, int concurrentStarts) {
        this.gate = new StartGate(concurrentStarts, START_HOLD);
        this.node = node;
        this.cfg = runnerConfig.apply(this);
        this.writer = writer;
        this.events = events;
        this.metrics = metrics;
        this.gc = gc;
        this.ledger = ledger;
        this.clock = cfg.clock();
        cfg.stateDB().onStored(this::stateStored);
        gc.afterEachPass(this::sweepLeftovers);
    }

    /** The node this agent runs allocations for. */
    public String node() {
        return node;
    }

    /** The local runner's terminal future, for a previous allocation that ran on this node. */
    public Optional<CompletableFuture<Void>> localTerminal(AllocId id) {
        Entry e = entries.get(id);
        AllocRunner r = e == null ? null : e.runner;
        return r == null ? Optional.empty() : Optional.of(r.terminal());
    }

    /**
     * Rebuilds runners from the state store; they do not run until {@link #reconcile} confirms them.
     * Returns how many were restored.
     */
    public int restore() {
        int restored = 0;
        List<StoredAllocation> all = cfg.stateDB().loadAll();
        if (ledger != null) {
            ledger.restore(all);
        }
        for (StoredAllocation stored : all) {
            if (stored.spec().isEmpty() && stored.damaged()) {
                // Its spec could not be read (quarantined): taken on again from the API server, directory kept,
                // so a task still running there is taken over rather than started twice.
                LOG.warn("allocation {} lost its stored spec; it is taken on again from the API server", stored.id());
                unrestored.add(stored.id());
                continue;
            }
            if (stored.spec().isEmpty()) {
                LOG.warn("stored allocation {} has no spec (a crash while it was created); removing it", stored.id());
                removeLeftovers(stored.id());
                continue;
            }
            String uid = stored.spec().map(Allocation::getMetadata).map(m -> m.getUid()).orElse(null);
            Entry e = new Entry(stored.id(), uid);
            entries.put(stored.id(), e);
            try {
                AllocRunner runner = AllocRunner.restore(cfg, stored);
                Allocation spec = runner.alloc();
                synchronized (e) {
                    e.owner = owner(spec);
                    e.tasks = spec.getSpec().getTasks();
                    e.generation = generationOf(spec);
                    e.runner = runner;
                }
                restored++;
            } catch (RuntimeException ex) {
                // As for an entry that cannot be read: its directory stays (a running task there is taken over),
                // and the API server's copy is taken on again; a leftover is swept once the API server is listed.
                LOG.error("cannot restore allocation {} from the state store; it is taken on again from the API server:"
                        + " {}", stored.id(), ex.toString());
                entries.remove(stored.id(), e);
                unrestored.add(stored.id());
            }
        }
        LOG.info("restored {} allocation(s) from the state store", restored);
        return restored;
    }

    /**
     * Destroys restored allocations the API server no longer has ({@code present} is
     * what it lists for this node, read after the watch started). Returns how many.
     */
    public int sweep(Collection<Allocation> present) throws InterruptedException {
        Set<String> uids = ConcurrentHashMap.newKeySet();
        present.forEach(a -> uids.add(a.getMetadata().getUid()));
        List<Entry> gone = new ArrayList<>();
        for (Entry e : entries.values()) {
            if (!e.confirmed && !uids.contains(e.uid) && entries.remove(e.id, e)) {
                gone.add(e);
            }
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Entry e : gone) {
                LOG.info("allocation {} is gone from the API server; destroying it", e.id);
                pool.submit(() -> {
                    Destroys.await(destroy(e), cfg.destroyDeadline());
                    return null;
                });
            }
        }
        Set<AllocId> listed = ConcurrentHashMap.newKeySet();
        present.forEach(a -> {
            try {
                listed.add(new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName()));
            } catch (IllegalArgumentException unusable) {
                // never had a directory here
            }
        });
        for (AllocId id : unrestored) {
            if (!listed.contains(id)) {
                leftovers.add(id); // not restored, and gone from the API server too: its state and directory go
            }
        }
        unrestored.clear();
        try {
            for (AllocId id : AllocDir.all(cfg.dataDir())) {
                if (!listed.contains(id) && !entries.containsKey(id)) {
                    LOG.info("the directory of allocation {} is left over (the API server has no such allocation);"
                            + " removing it", id);
                    leftovers.add(id);
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot list allocation directories for leftovers: {}", e.toString());
        }
        sweepLeftovers();
        return gone.size();
    }

    /**
     * Removes what destroyed allocations left behind (a directory that could not be removed, a store that could
     * not delete), and takes on allocations that waited for the store. Runs after {@link #sweep} and on every
     * garbage collection pass.
     */
    void sweepLeftovers() {
        for (AllocId id : List.copyOf(leftovers)) {
            // compute() keeps the id's entry from being created meanwhile: a new allocation of the same name
            // must not lose the directory it is building.
            entries.compute(id, (k, current) -> {
                if (current == null && removeLeftovers(id)) {
                    leftovers.remove(id);
                } else if (current != null) {
                    leftovers.remove(id); // taken on again: the directory is its own now
                }
                return current;
            });
        }
        for (Entry e : entries.values()) {
            if (e.waitingForStore != null && cfg.stateDB().unstored(e.id).isEmpty()) {
                stateStored(e.id);
            }
        }
    }

    /** The API server's newest copy of an allocation (created or changed): run it, update it, or refuse it. */
    public void reconcile(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
            movedAway(a);
            LOG.debug("ignoring allocation {}/{}: not for node {}", a.getMetadata().getNamespace(),
                    a.getMetadata().getName(), node);
            return;
        }
        AllocId id;
        try {
            id = new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
        } catch (IllegalArgumentException bad) {
            LOG.warn("ignoring allocation with an unusable name: {}", bad.getMessage());
            return;
        }
        String uid = a.getMetadata().getUid();
        long generation = generationOf(a);
        List<Violation> problems = UnreadableAllocations.problem(a).map(List::of)
                .orElseGet(() -> AllocationValidator.validate(a));

        Entry e = entries.get(id);
        if (e != null && !Objects.equals(e.uid, uid)) {
            // the same name, another object: the one this agent ran is gone
            if (entries.remove(id, e)) {
                LOG.info("allocation {} was replaced by a new object; destroying the old one", id);
                destroy(e);
            }
            e = null;
        }
        if (e == null) {
            if (collected.contains(uid) || ranBefore(a, generation)) {
                return; // terminal, collected here: never run again
            }
            awaitOldDestroyed(id);
            e = new Entry(id, uid);
            e.confirmed = true;
            e.seenNanos = System.nanoTime();
            entries.put(id, e);
        }
        synchronized (e) {
            e.owner = owner(a);
            if (e.built == null && a.getStatus() != null) {
                e.built = a.getStatus(); // keeps the conditions' transition times across agent restarts
            }
        }
        writer.observed(id, a.getStatus());
        if (problems.isEmpty() && e.runner != null) {
            problems = taskSetChange(e, a);
        }
        if (!problems.isEmpty()) {
            refuse(e, a, generation, problems);
            return;
        }
        boolean wasRefused;
        synchronized (e) {
            wasRefused = !e.problems.isEmpty();
            e.problems = List.of();
        }
        AllocRunner runner = e.runner;
        if (runner == null) {
            Entry starting = e;
            synchronized (e) {
                e.latest = a;
            }
            if (gate.admitOrQueue(e.id, () -> startAdmitted(starting))) {
                startAdmitted(e);
            }
        } else if (!e.confirmed) {
            e.confirmed = true;
            LOG.info("allocation {} confirmed by the API server; resuming it", id);
            if (generation > e.generation) {
                runner.update(a);
            }
            updateTasks(e, a, generation);
            runner.run();
            allocStateChanged(runner, runner.allocState(), null, null);
        } else if (generation > e.generation || wasRefused) {
            runner.update(a);
            updateTasks(e, a, generation);
            if (wasRefused) {
                allocStateChanged(runner, runner.allocState(), null, null);
            }
        }
    }

    /**
     * Whether {@code a} is one this agent runs whose {@code spec.nodeName} now names another node (an API server
     * without the CRD's CEL rules lets it change). If so, it is destroyed here as if deleted, in the background:
     * its tasks are killed and its devices released, and nothing more is written about it, neither status nor
     * finalizer, which stay for the agent of the node it moved to.
     */
    public boolean movedAway(Allocation a) {
        if (a.getSpec() != null && node.equals(a.getSpec().getNodeName())) {
            return false;
        }
        AllocId id;
        try {
            id = new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
        } catch (IllegalArgumentException bad) {
            return false;
        }
        Entry e = entries.get(id);
        if (e == null || !Objects.equals(e.uid, a.getMetadata().getUid()) || !entries.remove(id, e)) {
            return false;
        }
        LOG.info("allocation {} moved to node {}; destroying it here", id, a.getSpec() == null ? null
                : UserText.quote(a.getSpec().getNodeName()));
        writer.forget(id);
        destroy(e); // goes on in the background, until every task is dead
        return true;
    }

    /** Tasks cannot be added or removed in a running allocation: that takes a new allocation. */
    private static List<Violation> taskSetChange(Entry e, Allocation a) {
        List<String> before;
        synchronized (e) {
            before = e.tasks.stream().map(Task::getName).sorted().toList();
        }
        List<String> after = a.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        if (before.equals(after)) {
            return List.of();
        }
        return List.of(new Violation("spec.tasks", "tasks " + before + " became " + after + "; tasks cannot be added"
                + " or removed in a running allocation: create a new allocation (the running one keeps its tasks)"));
    }

    /** A terminal status for this generation, written by an agent: it ran and was collected (or the dir was lost). */
    private static boolean ranBefore(Allocation a, long generation) {
        AllocationStatus s = a.getStatus();
        if (!AllocationStatuses.isTerminal(s)) {
            return false;
        }
        boolean refusedOlderSpec = AllocationStatuses.refusedSpec(s)
                && (s.getObservedGeneration() == null || s.getObservedGeneration() < generation);
        return !refusedOlderSpec;
    }

    /** Taken on (the gate admitted it): starts the newest copy, then applies a copy that came meanwhile. */
    private void startAdmitted(Entry e) {
        Allocation a;
        synchronized (e) {
            a = e.latest;
            if (e.gone || a == null) {
                gate.release(e.id);
                return;
            }
        }
        try {
            start(e, a, generationOf(a));
        } catch (RuntimeException ex) {
            LOG.error("starting allocation {} failed; it is tried again on its next change or agent start", e.id, ex);
            gate.release(e.id);
            return;
        }
        Allocation newer;
        synchronized (e) {
            newer = e.latest != a && !e.gone ? e.latest : null;
            e.latest = null;
        }
        if (newer != null) {
            try {
                reconcile(newer);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void start(Entry e, Allocation a, long generation) {
        synchronized (e) {
            e.tasks = a.getSpec().getTasks();
            e.generation = generation;
        }
        AllocRunner runner;
        try {
            runner = new AllocRunner(cfg, a);
        } catch (StateStoreException ex) {
            // The node's disk, not the spec: reported as such, and taken on once the store has written it.
            waitForStore(e, a, generation, ex.getMessage());
            gate.release(e.id);
            return;
        } catch (RuntimeException ex) {
            LOG.warn("cannot create a runner for allocation {}: {}", e.id, ex.toString());
            refuse(e, a, generation, List.of(new Violation("metadata", "cannot be run here: " + ex.getMessage())));
            gate.release(e.id);
            return;
        }
        boolean deleted;
        synchronized (e) {
            deleted = e.gone;
            if (!deleted) {
                e.runner = runner;
                e.waitingForStore = null;
            }
        }
        if (deleted) { // deleted while it was being created: never run
            gate.release(e.id);
            try {
                runner.destroy();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        gc.track(new Collectable() {
            @Override
            public String id() {
                return e.id.key();
            }

            @Override
            public Optional<Instant> terminalSince() {
                return Optional.ofNullable(e.terminalSince);
            }

            @Override
            public void destroy() throws Exception {
                collect(e);
            }
        });
        runner.run();
    }

    /** The store could not write the spec of an allocation being taken on: Pending, with StateStored=False. */
    private void waitForStore(Entry e, Allocation a, long generation, String reason) {
        AllocationStatus status;
        boolean first;
        synchronized (e) {
            e.waitingForStore = a;
            first = !e.storeFailing;
            e.storeFailing = true;
            status = AllocationStatuses.awaitingStore(reason, generation, a.getSpec().getTasks(), e.built,
                    clock.instant());
            e.built = status;
        }
        if (first) {
            LOG.warn("allocation {} is taken on once the state store can write: {}", e.id, reason);
            events.recordForAllocation(owner(a), true, STATE_STORE_FAILED, storeFailedMessage(reason), clock.instant());
        }
        writer.publish(e.id, status);
    }

    /**
     * All of the allocation's state that waited is written now: an allocation that waited to be taken on is taken
     * on, a running one reports StateStored=True.
     */
    private void stateStored(AllocId id) {
        Entry e = entries.get(id);
        if (e == null) {
            return;
        }
        Allocation waiting;
        AllocRunner r;
        synchronized (e) {
            waiting = e.runner == null && !e.gone ? e.waitingForStore : null;
            e.waitingForStore = null;
            r = e.runner;
        }
        if (waiting != null) {
            LOG.info("the state store writes again; taking on allocation {}", id);
            try {
                reconcile(waiting);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        } else if (r != null) {
            allocStateChanged(r, r.allocState(), null, null);
        }
    }

    private static String storeFailedMessage(String reason) {
        return "The agent cannot write this allocation's state to its store: " + reason
                + ". Nothing is lost: tasks keep running and the agent writes it again with back-off; free disk space"
                + " on the node's data dir.";
    }

    private void updateTasks(Entry e, Allocation a, long generation) {
        synchronized (e) {
            // a runner keeps its tasks (adding or removing tasks needs a new allocation): only definitions change
            List<Task> now = new ArrayList<>();
            for (Task t : e.tasks) {
                Task newer = a.getSpec().task(t.getName());
                now.add(newer != null ? newer : t);
            }
            e.tasks = now;
            e.generation = Math.max(e.generation, generation);
        }
    }

    /** The spec cannot be run: report every bad field, keep any runner on its last good spec. */
    private void refuse(Entry e, Allocation a, long generation, List<Violation> problems) {
        AllocationStatus status;
        boolean changed;
        synchronized (e) {
            changed = !problems.equals(e.problems) || generation != e.generation;
            e.problems = problems;
            e.generation = Math.max(e.generation, generation);
            AllocRunner r = e.runner;
            AllocationStatus running = r == null ? null
                    : AllocationStatuses.of(r.allocState(), e.tasks, e.built, clock.instant());
            status = AllocationStatuses.invalid(problems, generation, running, e.built, clock.instant());
            e.built = status;
        }
        if (changed) {
            String message = "Invalid allocation: " + AllocationStatuses.describe(problems);
            LOG.warn("allocation {}: {}", e.id, message);
            events.recordForAllocation(owner(a), true, TaskEventType.FailedValidation.name(), message, clock.instant());
        }
        writer.publish(e.id, status);
    }

    /**
     * The allocation is being deleted: destroy its runner, its directory and its stored state, and free its devices
     * once its tasks are dead. Returns whether that is done; false while a task of it may still be alive (its kill
     * keeps failing): the destroy goes on, its finalizer must stay, and a later call tells when it is done.
     */
    public boolean delete(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
            return true;
        }
        AllocId id;
        try {
            id = new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
        } catch (IllegalArgumentException bad) {
            return true; // never taken on (see reconcile): nothing here to destroy, and the delete must complete
        }
        Entry e = entries.remove(id);
        CompletableFuture<Void> destroyed = e != null ? destroy(e) : destroys.pending(id);
        if (destroyed == null) {
            removeLeftovers(id);
        } else if (!Destroys.await(destroyed, cfg.destroyDeadline())) {
            LOG.warn("allocation {}: a task may still be alive; its finalizer stays until it is dead", id);
            return false;
        }
        writer.forget(id);
        return true;
    }

    /**
     * Destroys the allocation's runner until every task is dead (again and again while a kill fails), then frees
     * its devices: never before, so no new allocation is given a device a dying task still uses.
     */
    private CompletableFuture<Void> destroy(Entry e) {
        AllocRunner r;
        synchronized (e) {
            e.gone = true;
            r = e.runner;
        }
        gate.cancel(e.id);
        gc.forget(e.id.key());
        if (r == null) {
            if (!removeLeftovers(e.id)) {
                leftovers.add(e.id);
            }
            return CompletableFuture.completedFuture(null);
        }
        return destroyUntilDead(e.id, r);
    }

    private CompletableFuture<Void> destroyUntilDead(AllocId id, AllocRunner r) {
        dying.add(r);
        return destroys.start(id, r::destroy, () -> {
            forgetDevices(id);
            dying.remove(r);
            noteIfLeftOver(id);
        });
    }

    /** A destroyed allocation's directory that is still there (it could not be removed) is swept later. */
    private void noteIfLeftOver(AllocId id) {
        if (Files.exists(AllocDir.of(cfg.dataDir(), id).root(), LinkOption.NOFOLLOW_LINKS)) {
            leftovers.add(id);
        }
    }

    /**
     * A new allocation under a name whose old allocation is still being destroyed must wait: they would share the
     * directory and the stored state. Throws (JOSDK tries the reconcile again later) when the old one is not done.
     */
    private void awaitOldDestroyed(AllocId id) throws InterruptedException {
        CompletableFuture<Void> old = destroys.pending(id);
        if (old != null && !Destroys.await(old, cfg.destroyDeadline())) {
            throw new IllegalStateException("allocation " + id + " cannot start yet: an earlier allocation of that"
                    + " name is still being destroyed (a task of it may still be alive)");
        }
    }

    /** Collected by the garbage collector: terminal, so destroyed here; the API object stays as it is. */
    private void collect(Entry e) throws InterruptedException {
        if (entries.remove(e.id, e)) {
            if (e.uid != null) {
                collected.add(e.uid);
            }
            AllocRunner r = e.runner;
            if (r != null && !Destroys.await(destroyUntilDead(e.id, r), cfg.destroyDeadline())) {
                LOG.warn("collecting allocation {}: a task may still be alive; tried again until it is dead", e.id);
                return;
            }
            LOG.info("collected terminal allocation {}", e.id);
        }
    }

    private void releaseDevices(AllocId id) {
        if (ledger != null) {
            ledger.release(id);
        }
    }

    /** Frees the devices of an allocation destroyed with its stored state (which held its reservations). */
    private void forgetDevices(AllocId id) {
        if (ledger != null) {
            ledger.forget(id);
        }
    }

    @Override
    public void hookFailed(AllocRunner runner, String hook, String phase, RuntimeException failure) {
        metrics.hookFailure(hook, phase);
    }

    /**
     * Removes the allocation's directory and stored state. Returns false when the directory is still there (it is
     * then swept again later); a deletion the store cannot write now it applies itself later.
     */
    private boolean removeLeftovers(AllocId id) {
        boolean removed = true;
        try {
            AllocDir.of(cfg.dataDir(), id).destroy();
        } catch (IOException | RuntimeException ex) {
            LEFTOVER_FAILURES.log(id.key(), suppressed -> LOG.warn("cannot remove the directory of {}: {}; trying again"
                    + " at the next garbage collection", id, ex.toString()));
            removed = false;
        }
        try {
            cfg.stateDB().deleteAllocation(id);
        } catch (StateStoreException ex) {
            LOG.debug("the stored state of {} is deleted later: {}", id, ex.getMessage());
        }
        return removed;
    }

    @Override
    public void allocStateChanged(AllocRunner runner, AllocState state, String task, TaskEvent event) {
        Entry e = entries.get(runner.id());
        if (e == null || (e.runner != null && e.runner != runner)) {
            return; // destroyed, or replaced by a newer runner
        }
        if (event != null) {
            metrics.taskEvent(event.getType());
        }
        AllocationStatus status;
        boolean becameTerminal = false;
        boolean storeChanged = false;
        Optional<String> unstored = cfg.stateDB().unstored(e.id);
        Allocation owner;
        synchronized (e) {
            owner = e.owner;
            if (state.version() < e.builtVersion || e.tasks == null) {
                status = null;
            } else {
                e.builtVersion = state.version();
                status = AllocationStatuses.of(state, e.tasks, e.built, clock.instant());
                if (ledger != null) {
                    status.setAllocatedDevices(ledger.allocated(e.id).orElse(null));
                }
                if (!e.problems.isEmpty()) {
                    status = AllocationStatuses.invalid(e.problems, e.generation, status, e.built, clock.instant());
                }
                status = AllocationStatuses.withStateStored(status, unstored, state.observedGeneration(), e.built,
                        clock.instant());
                if (unstored.isPresent() != e.storeFailing) {
                    e.storeFailing = unstored.isPresent();
                    storeChanged = true;
                }
                e.built = status;
                if (state.clientStatus() != ClientStatus.Pending) {
                    gate.release(e.id);
                }
                if (state.clientStatus() == ClientStatus.Running && !e.wasRunning) {
                    e.wasRunning = true;
                    if (e.seenNanos != 0) {
                        metrics.seenToRunning((System.nanoTime() - e.seenNanos) / 1e9);
                    }
                }
                boolean terminal = AllocationStatuses.isTerminal(status) && e.problems.isEmpty();
                if (terminal && e.terminalSince == null) {
                    e.terminalSince = clock.instant();
                    becameTerminal = true;
                } else if (!terminal) {
                    e.terminalSince = null;
                }
            }
        }
        if (event != null && owner != null && e.confirmed) {
            events.record(owner, task, event, clock);
        }
        if (storeChanged && owner != null && e.confirmed) {
            if (unstored.isPresent()) {
                events.recordForAllocation(owner, true, STATE_STORE_FAILED, storeFailedMessage(unstored.get()),
                        clock.instant());
            } else {
                events.recordForAllocation(owner, false, STATE_STORED, "The agent's state store holds this"
                        + " allocation's state again", clock.instant());
            }
        }
        if (status != null && e.confirmed) {
            writer.publish(e.id, status);
        }
        if (becameTerminal) {
            releaseDevices(e.id); // the status keeps naming them: it was built above
            gc.terminalChanged();
        }
    }

    @Override
    public void allocWarning(AllocRunner runner, String reason, String message) {
        Entry e = entries.get(runner.id());
        if (e == null || (e.runner != null && e.runner != runner)) {
            return; // destroyed, or replaced by a newer runner
        }
        Allocation owner;
        synchronized (e) {
            owner = e.owner;
        }
        if (owner != null && e.confirmed) {
            events.recordForAllocation(owner, true, reason, message, clock.instant());
        }
    }

    /** Allocations by the client status last reported for them. */
    /** The runner of an allocation this agent runs (one the API server confirmed), if any. */
    public Optional<AllocRunner> runner(AllocId id) {
        Entry e = entries.get(id);
        return e == null || !e.confirmed ? Optional.empty() : Optional.ofNullable(e.runner);
    }

    public Map<ClientStatus, Integer> countByClientStatus() {
        Map<ClientStatus, Integer> out = new EnumMap<>(ClientStatus.class);
        for (Entry e : entries.values()) {
            AllocationStatus s;
            synchronized (e) {
                s = e.built;
            }
            if (s != null && s.getClientStatus() != null) {
                out.merge(s.getClientStatus(), 1, Integer::sum);
            }
        }
        return out;
    }

    /** How many allocations this agent holds (running, terminal or refused). */
    public int size() {
        return entries.size();
    }

    /** Allocations waiting to be taken on ({@link StartGate}). */
    public int waitingToStart() {
        return gate.waiting();
    }

    /**
     * For an agent that stops: starts under way end (what waits is left for the next agent), runners stop, tasks
     * keep running. Joins every runner's threads.
     */
    public void shutdown() throws InterruptedException {
        gate.close();
        List<AllocRunner> runners = new ArrayList<>(dying);
        entries.values().stream().map(e -> e.runner).filter(Objects::nonNull).forEach(runners::add);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (AllocRunner r : runners) {
                pool.submit(() -> {
                    r.shutdown();
                    return null;
                });
            }
        }
        destroys.close(); // after the runners: a destroy under way then returns at once, nothing removed
    }

    private static long generationOf(Allocation a) {
        Long g = a.getMetadata().getGeneration();
        return g == null ? 0 : g;
    }

    /** A metadata-only copy of {@code a}: what an Event needs to point at it. */
    private static Allocation owner(Allocation a) {
        Allocation o = new Allocation();
        o.setMetadata(new ObjectMetaBuilder().withName(a.getMetadata().getName())
                .withNamespace(a.getMetadata().getNamespace()).withUid(a.getMetadata().getUid()).build());
        return o;
    }
}
