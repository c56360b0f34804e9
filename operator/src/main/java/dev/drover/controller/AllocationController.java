package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.allocwatcher.LocalFirst;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.validation.AllocationValidator;
import dev.drover.api.validation.Violation;
import dev.drover.common.UserText;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.services.AllocationEndpoints;
import dev.drover.controller.status.AllocationStatuses;
import dev.drover.controller.status.StatusWriter;
import dev.drover.devices.DeviceLedger;
import dev.drover.gc.GarbageCollector;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StoredLoad;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's allocations: creates, updates and destroys alloc runners as the API server's Allocations come and go.
 * Each allocation it holds is a {@link TrackedAllocation}; what its runner tells is routed there and reported
 * ({@link AllocationReports}); ending it is the {@link Teardown}'s, and an agent's start the {@link Restorer}'s.
 *
 * <p>It acts only on allocations whose {@code spec.nodeName} is this node, whatever the watch delivered. On start,
 * {@link #restore()} rebuilds runners from the state store before anything else and reattaches their running tasks;
 * they start nothing until the API server confirms their allocation ({@link #reconcile}) or shows it is gone
 * ({@link #sweep}).
 */
public final class AllocationController {

    private static final Logger LOG = LoggerFactory.getLogger(AllocationController.class);
    /** The longest one allocation keeps a start slot (it may wait on a previous allocation, or a long prestart). */
    static final Duration START_HOLD = Duration.ofSeconds(2);

    private final String node;
    private final StateDB db;
    private final StatusWriter writer;
    private final ConcurrentMap<AllocId, TrackedAllocation> held = new ConcurrentHashMap<>();
    private final StartGate gate;
    private final AllocationReports reports;
    private final Leftovers leftovers;
    private final Teardown teardown;
    private final Restorer restorer;
    private final AllocationEndpoints endpoints;
    private final Starts starts;
    private final Admissions admissions;

    /**
     * @param elsewhere        previous allocations that ran on other nodes (one that ran here is waited on through
     *                         its runner)
     * @param ledger           the node's device reservations, or null when the agent runs no device plugins
     * @param concurrentStarts new allocations taken on at once at most ({@link StartGate}); 0 for no bound
     * @param admissions       what the node may hand out, and what the allocations taken on requested
     */
    public AllocationController(
            String node,
            AllocRunnerConfig runnerConfig,
            PreviousAllocations elsewhere,
            StatusWriter writer,
            EventRecorder events,
            DroverMetrics metrics,
            GarbageCollector gc,
            DeviceLedger ledger,
            int concurrentStarts,
            Admissions admissions) {
        this(
                node,
                runnerConfig,
                elsewhere,
                writer,
                events,
                metrics,
                gc,
                ledger,
                concurrentStarts,
                admissions,
                AllocationEndpoints.NONE);
    }

    /** @param endpoints where the allocations' endpoints of Services go ({@code spec.services}) */
    public AllocationController(
            String node,
            AllocRunnerConfig runnerConfig,
            PreviousAllocations elsewhere,
            StatusWriter writer,
            EventRecorder events,
            DroverMetrics metrics,
            GarbageCollector gc,
            DeviceLedger ledger,
            int concurrentStarts,
            Admissions admissions,
            AllocationEndpoints endpoints) {
        this(
                node,
                runnerConfig,
                elsewhere,
                writer,
                events,
                metrics,
                gc,
                ledger,
                concurrentStarts,
                admissions,
                endpoints,
                UnaryOperator.identity());
    }

    /** @param factory wraps the factory of runners (tests hold a start) */
    AllocationController(
            String node,
            AllocRunnerConfig runnerConfig,
            PreviousAllocations elsewhere,
            StatusWriter writer,
            EventRecorder events,
            DroverMetrics metrics,
            GarbageCollector gc,
            DeviceLedger ledger,
            int concurrentStarts,
            Admissions admissions,
            AllocationEndpoints endpoints,
            UnaryOperator<RunnerFactory> factory) {
        this.node = node;
        this.endpoints = endpoints;
        this.db = runnerConfig.stateDB();
        this.writer = writer;
        this.gate = new StartGate(concurrentStarts, START_HOLD);
        this.admissions = admissions;
        RunnerFactory runners = factory.apply(
                RunnerFactory.of(runnerConfig, new LocalFirst(this::localTerminal, elsewhere, elsewhere::fetchDisk)));
        this.reports = new AllocationReports(
                writer, events, metrics, gc, ledger, gate, db, runnerConfig.clock(), admissions, endpoints);
        this.leftovers = new Leftovers(
                runnerConfig.dataDir(), db, held, runnerConfig.tasks().drivers());
        this.teardown = new Teardown(held, gate, gc, leftovers, runnerConfig.destroyDeadline(), admissions);
        Function<TrackedAllocation, AllocStateListener> listeners = t -> new RunnerListener(t, held, reports);
        this.restorer =
                new Restorer(db, ledger, held, runners, listeners, teardown, leftovers, admissions, this::reattached);
        this.starts = new Starts(gate, runners, listeners, reports, gc, teardown, this::reconcile, admissions);
        db.onStored(this::stateStored);
        gc.afterEachPass(this::sweepLeftovers);
    }

    /** The node this agent runs allocations for. */
    public String node() {
        return node;
    }

    /** The local runner's terminal future, for a previous allocation that ran on this node. */
    private Optional<CompletableFuture<Void>> localTerminal(AllocId id) {
        TrackedAllocation t = held.get(id);
        return t == null ? Optional.empty() : t.terminal();
    }

    /**
     * Rebuilds runners from the state store and reattaches their running tasks; nothing else of theirs runs (no start,
     * no restart) until {@link #reconcile} confirms them. Returns how many were restored.
     */
    public int restore() {
        return restore(StoredLoad.now(db));
    }

    /** As {@link #restore()}, from a read of the store begun earlier ({@link StoredLoad#begin}). */
    public int restore(StoredLoad load) {
        return restorer.restore(load);
    }

    /**
     * A restored allocation's running tasks were reattached (or not): its status is built, for this agent's own view
     * and metrics; it reaches the API server only once confirmed, and not at all if it is what the API server has.
     */
    private void reattached(TrackedAllocation t) {
        AllocRunner r = t.runner();
        if (r != null && held.get(t.id) == t) {
            reports.stateChanged(t, r.allocState(), null, List.of());
        }
    }

    /**
     * Destroys restored allocations the API server no longer has ({@code present} is
     * what it lists for this node, read after the watch started). Returns how many.
     */
    public int sweep(Collection<Allocation> present) throws InterruptedException {
        int gone = restorer.sweep(present);
        sweepLeftovers();
        endpoints.allocationsKnown();
        return gone;
    }

    /**
     * Removes what destroyed allocations left behind, and takes on allocations that waited for the store. Runs
     * after {@link #sweep} and on every garbage collection pass.
     */
    void sweepLeftovers() {
        leftovers.sweep();
        for (TrackedAllocation t : held.values()) {
            if (t.waitsForStore() && db.unstored(t.id).isEmpty()) {
                stateStored(t.id);
            }
        }
    }

    /** The API server's newest copy of an allocation (created or changed): run it, update it, or refuse it. */
    public void reconcile(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
            movedAway(a);
            LOG.debug(
                    "ignoring allocation {}/{}: not for node {}",
                    a.getMetadata().getNamespace(),
                    a.getMetadata().getName(),
                    node);
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
        long generation = AllocationStatuses.generationOf(a);
        List<Violation> problems =
                UnreadableAllocations.problem(a).map(List::of).orElseGet(() -> AllocationValidator.validate(a));

        TrackedAllocation t = held.get(id);
        if (t != null && !Objects.equals(t.uid, uid)) {
            // the same name, another object: the one this agent ran is gone
            if (held.remove(id, t)) {
                LOG.info("allocation {} was replaced by a new object; destroying the old one", id);
                teardown.destroy(t);
            }
            t = null;
        }
        if (t == null) {
            if (teardown.collected(uid) || AllocationStatuses.ranBefore(a.getStatus(), generation)) {
                return; // terminal, collected here: never run again
            }
            teardown.awaitOldDestroyed(id);
            t = TrackedAllocation.seen(id, uid);
            held.put(id, t);
        }
        t.observed(a);
        writer.observed(id, a.getStatus());
        if (t.notAdmitted()) {
            return; // Failed for good: the node could not fit it when it came
        }
        AllocRunner runner = t.runner();
        if (problems.isEmpty() && runner != null) {
            problems = t.taskSetChange(a);
        }
        if (!problems.isEmpty()) {
            reports.refuse(t, a, generation, problems);
            runsOnAsItWas(t, runner, a);
            return;
        }
        if (runner != null && (generation > t.generation() || t.updateUnfit())) {
            Decision fits = admissions.resize(id, a); // a newer spec, or one the node could not fit before
            if (!fits.admitted()) {
                reports.refuseUpdate(t, a, generation, fits);
                runsOnAsItWas(t, runner, a);
                return;
            }
        }
        if (runner == null) {
            starts.takeOn(t, a); // admitted, or admitted again if it waits to start, or refused
            return;
        }
        boolean wasRefused = t.accept();
        if (t.apply(a, generation, wasRefused)) {
            reports.stateChanged(t, runner.allocState(), null, List.of());
        }
        runner.restartRequested(a);
    }

    /**
     * The newest spec of {@code t} was refused: its runner, if it has one, runs on with the last spec it accepted (a
     * restored one resumes with it) and may be restarted.
     */
    private static void runsOnAsItWas(TrackedAllocation t, AllocRunner runner, Allocation a) {
        if (runner != null && !t.resumeAsItWas() && t.confirmed()) {
            runner.restartRequested(a);
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
        AllocId id = idOf(a);
        TrackedAllocation t = id == null ? null : held.get(id);
        if (t == null || !Objects.equals(t.uid, a.getMetadata().getUid()) || !held.remove(id, t)) {
            return false;
        }
        LOG.info(
                "allocation {} moved to node {}; destroying it here",
                id,
                a.getSpec() == null ? null : UserText.quote(a.getSpec().getNodeName()));
        writer.forget(id);
        endpoints.gone(a);
        teardown.destroy(t); // goes on in the background, until every task is dead
        return true;
    }

    /**
     * The allocation is being deleted: destroy its runner, its directory and its stored state, and free its devices
     * once its tasks are dead. Returns whether that is done, waiting a second at most; false while a task of it may
     * still be alive (dying slowly, or its kill keeps failing): the destroy goes on, its finalizer must stay, and a
     * later call tells when it is done.
     */
    public boolean delete(Allocation a) throws InterruptedException {
        if (a.getSpec() == null || !node.equals(a.getSpec().getNodeName())) {
            return true;
        }
        AllocId id = idOf(a);
        if (id == null) {
            return true; // never taken on (see reconcile): nothing here to destroy, and the delete must complete
        }
        endpoints.gone(a);
        if (!teardown.deleted(id, held.remove(id))) {
            return false;
        }
        writer.forget(id);
        return true;
    }

    /**
     * All of the allocation's state that waited is written now: an allocation that waited to be taken on is taken
     * on, a running one reports StateStored=True.
     */
    private void stateStored(AllocId id) {
        TrackedAllocation t = held.get(id);
        if (t == null) {
            return;
        }
        if (starts.storeRecovered(t)) {
            LOG.info("the state store writes again; taking on allocation {}", id);
            return;
        }
        AllocRunner r = t.runner();
        if (r != null) {
            reports.stateChanged(t, r.allocState(), null, List.of());
        }
    }

    /** The runner of an allocation this agent runs (one the API server confirmed), if any. */
    public Optional<AllocRunner> runner(AllocId id) {
        TrackedAllocation t = held.get(id);
        return t == null || !t.confirmed() ? Optional.empty() : Optional.ofNullable(t.runner());
    }

    /** The runners of the allocations this agent runs (those the API server confirmed), in no order. */
    public List<AllocRunner> runners() {
        List<AllocRunner> out = new ArrayList<>();
        for (TrackedAllocation t : held.values()) {
            AllocRunner r = t.confirmed() ? t.runner() : null;
            if (r != null) {
                out.add(r);
            }
        }
        return out;
    }

    /** Allocations by the client status last reported for them. */
    public Map<ClientStatus, Integer> countByClientStatus() {
        Map<ClientStatus, Integer> out = new EnumMap<>(ClientStatus.class);
        for (TrackedAllocation t : held.values()) {
            AllocationStatus s = t.built();
            if (s != null && s.getClientStatus() != null) {
                out.merge(s.getClientStatus(), 1, Integer::sum);
            }
        }
        return out;
    }

    /** How many allocations this agent holds (running, terminal or refused). */
    public int size() {
        return held.size();
    }

    /** Allocations waiting to be taken on ({@link StartGate}). */
    public int waitingToStart() {
        return gate.waiting();
    }

    /** How long the allocation waiting longest to be taken on has waited; zero when none waits. */
    public Duration longestWaitToStart() {
        return gate.longestWait();
    }

    /**
     * For an agent that stops: starts under way end (what waits is left for the next agent), runners stop, tasks
     * keep running. Joins every runner's threads.
     */
    public void shutdown() throws InterruptedException {
        gate.close();
        teardown.shutdown(held.values());
    }

    /** An equal status the writer holds for {@code id}, or {@code observed} ({@link StatusWriter#sameAs}). */
    AllocationStatus knownStatus(AllocId id, AllocationStatus observed) {
        return writer.sameAs(id, observed);
    }

    /** The allocation's id, or null for a name no allocation here can have. */
    private static AllocId idOf(Allocation a) {
        try {
            return new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
        } catch (IllegalArgumentException unusable) {
            return null;
        }
    }
}
