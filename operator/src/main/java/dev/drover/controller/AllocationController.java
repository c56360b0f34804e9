package dev.drover.controller;

import dev.drover.allocrunner.AllocDir;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocrunner.AllocState;
import dev.drover.allocrunner.AllocStateListener;
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
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StoredAllocation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
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
    private final StartGate gate;

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
            if (stored.spec().isEmpty()) {
                LOG.warn("stored allocation {} has no spec (a crash while it was created); removing it", stored.id());
                removeLeftovers(stored.id());
                continue;
            }
            String uid = stored.spec().get().path("metadata").path("uid").asText(null);
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
                LOG.error("cannot restore allocation {} from the state store; removing it: {}", stored.id(), ex.toString());
                entries.remove(stored.id(), e);
                removeLeftovers(stored.id());
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
                    destroy(e);
                    return null;
                });
            }
        }
        return gone.size();
    }

    /** The API server's newest copy of an allocation (created or changed): run it, update it, or refuse it. */
    public void reconcile(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
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

    /** The allocation is being deleted: destroy its runner, its directory and its stored state. */
    public void delete(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
            return;
        }
        AllocId id = new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
        Entry e = entries.remove(id);
        if (e != null) {
            destroy(e);
        } else {
            removeLeftovers(id);
        }
        writer.forget(id);
    }

    private void destroy(Entry e) throws InterruptedException {
        AllocRunner r;
        synchronized (e) {
            e.gone = true;
            r = e.runner;
        }
        gate.cancel(e.id);
        gc.forget(e.id.key());
        releaseDevices(e.id);
        if (r != null) {
            r.destroy();
        } else {
            removeLeftovers(e.id);
        }
    }

    /** Collected by the garbage collector: terminal, so destroyed here; the API object stays as it is. */
    private void collect(Entry e) throws InterruptedException {
        if (entries.remove(e.id, e)) {
            if (e.uid != null) {
                collected.add(e.uid);
            }
            releaseDevices(e.id);
            AllocRunner r = e.runner;
            if (r != null) {
                r.destroy();
            }
            LOG.info("collected terminal allocation {}", e.id);
        }
    }

    private void releaseDevices(AllocId id) {
        if (ledger != null) {
            ledger.release(id);
        }
    }

    private void removeLeftovers(AllocId id) {
        try {
            AllocDir.of(cfg.dataDir(), id).destroy();
        } catch (IOException | RuntimeException ex) {
            LOG.warn("cannot remove the directory of {}: {}", id, ex.toString());
        }
        cfg.stateDB().deleteAllocation(id);
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
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Entry e : entries.values()) {
                AllocRunner r = e.runner;
                if (r != null) {
                    pool.submit(() -> {
                        r.shutdown();
                        return null;
                    });
                }
            }
        }
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
