package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.validation.Violation;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.status.AllocationStatuses;
import dev.drover.state.AllocId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One allocation the controller holds, from the moment it is seen (or restored) until it is let go: its runner, the
 * tasks and generation it runs, why its spec was refused, the status last built for it, and its {@link Phase}. Its
 * state is guarded by itself; the controller routes every event about the allocation here, one method per event,
 * and acts on what comes back (publishing, recording, releasing).
 *
 * <pre>{@code
 *  restored from the store            seen on the API server
 *           |                                   |
 *           v                                   v
 *       RESTORING              +-----------> NEW ------ NOT_FITTED -----> NOT_ADMITTED
 *           |                  |                |
 *           |            START_FAILED       ADMITTED
 *           |                  |                v
 *           |                  |             QUEUED <----------------------------+
 *           |                  |                |                                |
 *           |                  |              SLOT                   ADMITTED, STORE_RECOVERED
 *           |                  |                v                                |
 *           |                  +------------ STARTING -- STORE_FAILED --> AWAITING_STORE
 *           |                                   |
 *       CONFIRMED                            STARTED
 *           |                                   |
 *           +-------------> RUNNING <-----------+
 *                            |    ^
 *                       ENDED|    |RESUMED
 *                            v    |
 *                           TERMINAL
 *
 *  any phase --RELEASED--> RELEASED: deleted, replaced, moved away, swept or collected
 * }</pre>
 *
 * Who drives which edges: {@link Restorer} restores and sweeps; {@link AllocationController#reconcile} confirms,
 * updates and refuses specs; {@link Starts} admits, queues and starts (with the {@link StartGate}'s slots); the
 * runner's reports ({@link AllocationReports#stateChanged}) end and resume it; {@link Teardown} releases it. A
 * restored allocation's runner reports while it waits for confirmation, and a started one's while its start is
 * under way: an end heard then takes effect once it is confirmed or started. Waiting on a previous allocation is
 * the runner's own (its client status stays Pending), inside RUNNING.
 */
final class TrackedAllocation {

    private static final Logger LOG = LoggerFactory.getLogger(TrackedAllocation.class);

    final AllocId id;
    final String uid;
    /** Written under the lock; read without it where a glance will do. */
    private volatile Phase phase;
    /** A metadata-only copy of the allocation, for Events. */
    private Allocation owner;

    private Publishes publishes = Publishes.NONE;

    private volatile AllocRunner runner;
    private List<Task> tasks;
    /** The ServiceAccount its tasks run as, fixed for its life as a Pod's is. */
    private String serviceAccount;

    private long generation;
    /** The copy to start (QUEUED), a newer one that came while STARTING, or the one whose start threw (NEW). */
    private Allocation latest;
    /** The copy whose spec the store could not write (AWAITING_STORE, or QUEUED since with a newer copy). */
    private Allocation waitingForStore;

    private final BuiltStatus status;

    private TrackedAllocation(AllocId id, String uid, Phase phase, long seenNanos) {
        this.id = id;
        this.uid = uid;
        this.phase = phase;
        this.status = new BuiltStatus(seenNanos);
    }

    /** Seen on the API server now: confirmed from the start. */
    static TrackedAllocation seen(AllocId id, String uid) {
        return new TrackedAllocation(id, uid, Phase.NEW, System.nanoTime());
    }

    /** Rebuilt from the state store: running tasks reattached, nothing started until the API server confirms it. */
    static TrackedAllocation restoring(AllocId id, String uid) {
        return new TrackedAllocation(id, uid, Phase.RESTORING, 0);
    }

    /** Applies {@code e} to the phase; returns the phase it leads to. Call with the lock held. */
    private Phase fire(Phase.Event e) {
        Phase next = phase.on(e);
        if (next != phase) {
            LOG.debug("allocation {}: {} on {} -> {}", id, phase, e, next);
            phase = next;
        }
        return next;
    }

    Phase phase() {
        return phase;
    }

    /**
     * The runner rebuilt from the store for a {@link #restoring} allocation; it runs {@code spec}, the one the store
     * held, read here and
     * not copied (the runner never changes it).
     */
    synchronized void restoredWith(AllocRunner restored, Allocation spec) {
        owner = EventRecorder.owner(spec);
        publishes = Publishes.of(spec);
        tasks = spec.getSpec().getTasks();
        serviceAccount = spec.getSpec().effectiveServiceAccountName();
        generation = AllocationStatuses.generationOf(spec);
        runner = restored;
    }

    AllocRunner runner() {
        return runner;
    }

    /** Whether the API server confirmed it (one seen there is confirmed from the start). */
    boolean confirmed() {
        return phase != Phase.RESTORING;
    }

    /**
     * A restored allocation the API server confirms with a spec that was refused: it resumes with the spec it ran.
     * Returns whether it waited for that.
     */
    boolean resumeAsItWas() {
        AllocRunner r = runner;
        if (r == null || !confirm()) {
            return false;
        }
        LOG.info("allocation {} confirmed by the API server; resuming it as it ran (its newest spec was refused)", id);
        r.run();
        return true;
    }

    /** {@link Phase.Event#CONFIRMED}; returns whether it waited for that. An end heard meanwhile takes effect. */
    private synchronized boolean confirm() {
        if (phase != Phase.RESTORING) {
            return false;
        }
        fire(Phase.Event.CONFIRMED);
        if (status.terminalSince().isPresent()) {
            fire(Phase.Event.ENDED);
        }
        return true;
    }

    synchronized long generation() {
        return generation;
    }

    synchronized Allocation owner() {
        return owner;
    }

    /** What the API server's newest copy publishes into Services, and whether it is stopping. */
    synchronized Publishes publishes() {
        return publishes;
    }

    synchronized AllocationStatus built() {
        return status.current();
    }

    /** When its runner's allocation became terminal, if it is. */
    Optional<Instant> terminalSince() {
        return status.terminalSince();
    }

    /** Its runner's terminal future, for an allocation on this node that replaces it. */
    Optional<CompletableFuture<Void>> terminal() {
        AllocRunner r = runner;
        return r == null ? Optional.empty() : Optional.of(r.terminal());
    }

    /** The API server's copy was seen: Events point at it, and its status keeps the conditions' transition times. */
    synchronized void observed(Allocation a) {
        owner = EventRecorder.owner(a);
        publishes = Publishes.of(a);
        status.observed(a.getStatus(), phase == Phase.RESTORING);
    }

    /** Tasks cannot be added or removed in a running allocation: that takes a new allocation. */
    synchronized List<Violation> taskSetChange(Allocation a) {
        return TaskSetChange.of(tasks, serviceAccount, a);
    }

    /** Its spec is valid (again) and fits the node; returns whether it was refused before. */
    synchronized boolean accept() {
        return status.accept();
    }

    /**
     * The spec cannot be run: every bad field reported, any runner kept on its last good spec. The status built is
     * handed to {@code publish} (as by each method here that builds one) before the lock is let go, so a status built
     * later is never overtaken by this one on its way to the writer.
     */
    synchronized BuiltStatus.Built refuse(
            long newGeneration, List<Violation> newProblems, Instant now, Consumer<AllocationStatus> publish) {
        AllocRunner r = runner;
        BuiltStatus.Built b =
                status.refuse(newGeneration, generation, newProblems, r == null ? null : r.allocState(), tasks, now);
        generation = Math.max(generation, newGeneration);
        publish.accept(b.status());
        return b;
    }

    /**
     * The node cannot fit the allocation's new generation ({@code d} says why): Admitted=False for it, and the runner
     * keeps the definition it runs, as for a refused spec; one not started yet starts with the copy admitted before
     * (Pending until then). The status goes to {@code publish} under the lock.
     */
    synchronized BuiltStatus.Built refuseUpdate(
            long newGeneration, Decision d, Instant now, Consumer<AllocationStatus> publish) {
        AllocRunner r = runner;
        AllocationStatus running = r != null
                ? AllocationStatuses.of(r.allocState(), tasks, status.current(), now)
                : AllocationStatuses.notStarted(latest, waitingForStore, status.current(), now);
        BuiltStatus.Built b = status.refuseUpdate(newGeneration, d, running, now);
        generation = Math.max(generation, newGeneration);
        publish.accept(b.status());
        return b;
    }

    /** Whether the node could not fit its newest generation ({@link #refuseUpdate}). */
    synchronized boolean updateUnfit() {
        return status.updateUnfit();
    }

    /**
     * Applies a valid spec to its runner: a restored allocation the API server confirms now resumes, a newer
     * generation updates the runner in place. Returns whether its status is to be built again (it resumed, or its
     * spec was refused before).
     */
    boolean apply(Allocation a, long newGeneration, boolean wasRefused) {
        AllocRunner r = runner;
        if (confirm()) {
            LOG.info("allocation {} confirmed by the API server; resuming it", id);
            if (newGeneration > generation()) {
                r.update(a);
            }
            updateTasks(a, newGeneration);
            r.run();
            return true;
        }
        if (newGeneration > generation() || wasRefused) {
            r.update(a);
            updateTasks(a, newGeneration);
        }
        return wasRefused;
    }

    /** A runner keeps its tasks (adding or removing tasks needs a new allocation): only definitions change. */
    private synchronized void updateTasks(Allocation a, long newGeneration) {
        List<Task> now = new ArrayList<>();
        for (Task t : tasks) {
            Task newer = a.getSpec().task(t.getName());
            now.add(newer != null ? newer : t);
        }
        tasks = now;
        generation = Math.max(generation, newGeneration);
    }

    /**
     * Keeps {@code a}, a copy that came while the runner is being created, to apply once it runs; false, keeping
     * nothing, when no start is under way (the copy is then admitted as any other).
     */
    synchronized boolean follows(Allocation a) {
        if (phase != Phase.STARTING) {
            return false;
        }
        latest = a;
        return true;
    }

    /**
     * {@link Phase.Event#ADMITTED} with {@code a}: it waits for a start slot with that copy ({@link Phase#QUEUED}),
     * or follows the start under way ({@link Phase#STARTING}), or is an update of the runner that runs now
     * ({@link Phase#runs()}: its runner was created since the caller saw none). Returns the phase it leads to.
     */
    synchronized Phase admit(Allocation a) {
        Phase next = fire(Phase.Event.ADMITTED);
        if (next == Phase.QUEUED || next == Phase.STARTING) {
            latest = a;
        }
        return next;
    }

    /**
     * {@link Phase.Event#SLOT}: the copy to start, or null when the slot came for one that is not queued (released
     * meanwhile, or started already: one runner per allocation).
     */
    synchronized Allocation slotGiven() {
        if (phase != Phase.QUEUED) {
            return null;
        }
        fire(Phase.Event.SLOT);
        return latest;
    }

    /** Its runner is being created with {@code a}: the tasks and generation it runs from now on. */
    synchronized void starting(Allocation a, long newGeneration) {
        waitingForStore = null; // an older copy, if one waited for the store: this start replaces it
        tasks = a.getSpec().getTasks();
        serviceAccount = a.getSpec().effectiveServiceAccountName();
        generation = newGeneration;
    }

    /** The runner created for it; false when it was released while the runner was created (never to run). */
    synchronized boolean attach(AllocRunner created) {
        if (phase == Phase.RELEASED) {
            return false;
        }
        runner = created;
        List<Task> running = created.tasks();
        if (running.equals(tasks)) {
            tasks = running; // the runner's copy, not a third one (the informer's cache holds the newest)
        }
        return true;
    }

    /**
     * The start with {@code started} is over: {@link Phase.Event#STARTED} when its runner was attached (then
     * {@link Phase.Event#ENDED} if it ended meanwhile), {@link Phase.Event#STORE_FAILED} when the store could not
     * write its spec, {@link Phase.Event#START_FAILED} otherwise ({@code failed}: the start threw, and it starts with
     * that copy on its next change). Returns a newer copy that came meanwhile, to apply now, or null.
     */
    synchronized Allocation startedWith(Allocation started, boolean failed) {
        Allocation newer = latest != started && phase == Phase.STARTING ? latest : null;
        latest = failed ? started : null;
        if (runner != null) {
            fire(Phase.Event.STARTED);
            if (status.terminalSince().isPresent()) {
                fire(Phase.Event.ENDED);
            }
        } else {
            fire(waitingForStore != null ? Phase.Event.STORE_FAILED : Phase.Event.START_FAILED);
        }
        return newer;
    }

    /** {@link Phase.Event#NOT_FITTED}: Failed with Admitted=False, for good (a later copy is not admitted again). */
    synchronized BuiltStatus.Built refuseAdmission(
            Allocation a, long newGeneration, Decision d, Instant now, Consumer<AllocationStatus> publish) {
        boolean first = phase != Phase.NOT_ADMITTED;
        fire(Phase.Event.NOT_FITTED);
        generation = Math.max(generation, newGeneration);
        BuiltStatus.Built b = status.notAdmitted(d, newGeneration, a.getSpec().getTasks(), first, now);
        publish.accept(b.status());
        return b;
    }

    /** Whether the node could not fit it ({@link #refuseAdmission}). */
    boolean notAdmitted() {
        return phase == Phase.NOT_ADMITTED;
    }

    /**
     * The store could not write the spec of an allocation being started: Pending, with StateStored=False; it waits
     * for the store once the start is over ({@link #startedWith}).
     */
    synchronized BuiltStatus.Built waitForStore(
            Allocation a, long newGeneration, String reason, Instant now, Consumer<AllocationStatus> publish) {
        waitingForStore = a;
        BuiltStatus.Built b =
                status.awaitingStore(reason, newGeneration, a.getSpec().getTasks(), now);
        publish.accept(b.status());
        return b;
    }

    boolean waitsForStore() {
        return phase == Phase.AWAITING_STORE;
    }

    /**
     * {@link Phase.Event#STORE_RECOVERED}: the copy that waited for the store waits for a start slot; false if none
     * waited (a newer copy queued since starts instead of it).
     */
    synchronized boolean storeRecovered() {
        if (phase == Phase.QUEUED) {
            waitingForStore = null;
        }
        if (phase != Phase.AWAITING_STORE) {
            return false;
        }
        fire(Phase.Event.STORE_RECOVERED);
        latest = waitingForStore;
        waitingForStore = null;
        return true;
    }

    /** {@link Phase.Event#RELEASED}: nothing more is started for it or reported. Returns its runner, if it has one. */
    synchronized AllocRunner release() {
        fire(Phase.Event.RELEASED);
        return runner;
    }

    /**
     * Builds its status from the runner's {@code state} ({@link BuiltStatus#fromState}) and hands it to
     * {@code publish} under this allocation's lock, once the API server has confirmed the allocation and until it is
     * released: task runners report from their own threads, and a status built from an older state must not reach
     * the writer after a newer one (it would stay, written, until the next change). Then
     * {@link Phase.Event#ENDED} or {@link Phase.Event#RESUMED}, as the status says.
     */
    synchronized BuiltStatus.Change stateChanged(
            AllocState state,
            Optional<String> unstored,
            Supplier<List<AllocatedDevice>> devices,
            Instant now,
            Consumer<AllocationStatus> publish) {
        if (tasks == null) {
            return BuiltStatus.Change.dropped(owner);
        }
        BuiltStatus.Change c = status.fromState(state, tasks, generation, unstored, devices, owner, now);
        if (c.status() == null) {
            return c;
        }
        if (phase != Phase.RESTORING && phase != Phase.RELEASED) {
            publish.accept(c.status());
        }
        fire(status.terminalSince().isPresent() ? Phase.Event.ENDED : Phase.Event.RESUMED);
        return c;
    }
}
