package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
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
 * One allocation the controller holds, from the moment it is seen (or restored) until it is destroyed: its runner,
 * the tasks and generation it runs, why its spec was refused, the status last built for it, and where it is in
 * being taken on. Its state is guarded by itself; the controller routes every event about the allocation here and
 * acts on what comes back (publishing, recording, releasing).
 */
final class TrackedAllocation {

    private static final Logger LOG = LoggerFactory.getLogger(TrackedAllocation.class);

    /** A status built for the allocation; {@code news} tells whether its user should hear of it beyond the status. */
    record Built(AllocationStatus status, boolean news) {}

    /**
     * What a change of the runner's state made of the allocation ({@code status} null: an older state, dropped).
     *
     * @param tasksEnded terminal, and every task dead now: nothing of it can use its devices any more
     * @param enteredFailed its client status became Failed now (not one restored as Failed)
     */
    record Change(
            AllocationStatus status,
            Allocation owner,
            boolean storeChanged,
            boolean becameTerminal,
            boolean tasksEnded,
            boolean leftPending,
            long runningAfterNanos,
            boolean enteredFailed) {}

    final AllocId id;
    final String uid;
    /** When the agent first saw it (nanoTime), for the seen→running histogram; 0 for restored ones. */
    private final long seenNanos;
    /** A metadata-only copy of the allocation, for Events. */
    private Allocation owner;

    private volatile AllocRunner runner;
    private List<Task> tasks;
    /** The ServiceAccount its tasks run as, fixed for its life as a Pod's is. */
    private String serviceAccount;

    private long generation;
    private List<Violation> problems = List.of();
    /** Why the node could not fit its newest generation, which it does not run; null when it runs the newest. */
    private Decision unfitUpdate;
    /** That generation (one not started yet starts with an older one). */
    private long unfitGeneration;

    private AllocationStatus built;
    private long builtVersion = -1;
    /** Restored from the store and not yet confirmed by the API server: not run, nothing written. */
    private volatile boolean confirmed;

    private boolean wasRunning;
    private volatile Instant terminalSince;
    /** Terminal with every task dead was reported: its devices were freed. */
    private boolean endedReported;
    /** The newest copy seen while the allocation waits to be taken on (or is being started). */
    private Allocation latest;
    /** Its runner is being created with the copy the gate handed out ({@link #admitted}). */
    private boolean startUnderWay;
    /** Deleted (or replaced): a start under way must not leave a runner behind. */
    private boolean gone;
    /** Not taken on because the store could not write its spec: taken on once it has. */
    private volatile Allocation waitingForStore;
    /** Some of its state waits to be written again (StateStored=False reported). */
    private boolean storeFailing;
    /** The node could not fit it: Failed for good, never taken on. */
    private volatile boolean notAdmitted;

    private TrackedAllocation(AllocId id, String uid, boolean confirmed, long seenNanos) {
        this.id = id;
        this.uid = uid;
        this.confirmed = confirmed;
        this.seenNanos = seenNanos;
    }

    /** Seen on the API server now: confirmed from the start. */
    static TrackedAllocation seen(AllocId id, String uid) {
        return new TrackedAllocation(id, uid, true, System.nanoTime());
    }

    /** Rebuilt from the state store: it waits, not run, until the API server confirms it. */
    static TrackedAllocation restoring(AllocId id, String uid) {
        return new TrackedAllocation(id, uid, false, 0);
    }

    /** The runner rebuilt from the store for a {@link #restoring} allocation; it runs the spec the store held. */
    synchronized void restoredWith(AllocRunner restored) {
        Allocation spec = restored.alloc();
        owner = EventRecorder.owner(spec);
        tasks = spec.getSpec().getTasks();
        serviceAccount = spec.getSpec().effectiveServiceAccountName();
        generation = AllocationStatuses.generationOf(spec);
        runner = restored;
    }

    AllocRunner runner() {
        return runner;
    }

    boolean confirmed() {
        return confirmed;
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

    /** Confirms a restored allocation; returns whether it waited for that. */
    private boolean confirm() {
        boolean waited = !confirmed;
        confirmed = true;
        return waited;
    }

    synchronized long generation() {
        return generation;
    }

    synchronized Allocation owner() {
        return owner;
    }

    synchronized AllocationStatus built() {
        return built;
    }

    Optional<Instant> terminalSince() {
        return Optional.ofNullable(terminalSince);
    }

    /** Its runner's terminal future, for an allocation on this node that replaces it. */
    Optional<CompletableFuture<Void>> terminal() {
        AllocRunner r = runner;
        return r == null ? Optional.empty() : Optional.of(r.terminal());
    }

    /** The API server's copy was seen: Events point at it, and its status keeps the conditions' transition times. */
    synchronized void observed(Allocation a) {
        owner = EventRecorder.owner(a);
        if (built == null && a.getStatus() != null) {
            built = a.getStatus(); // keeps the conditions' transition times across agent restarts
        }
    }

    /** Tasks cannot be added or removed in a running allocation: that takes a new allocation. */
    synchronized List<Violation> taskSetChange(Allocation a) {
        return TaskSetChange.of(tasks, serviceAccount, a);
    }

    /** Its spec is valid (again) and fits the node; returns whether it was refused before. */
    synchronized boolean accept() {
        boolean wasRefused = !problems.isEmpty() || unfitUpdate != null;
        problems = List.of();
        unfitUpdate = null;
        return wasRefused;
    }

    /**
     * The spec cannot be run: every bad field reported, any runner kept on its last good spec. The status built is
     * handed to {@code publish} (as by each method here that builds one) before the lock is let go, so a status built
     * later is never overtaken by this one on its way to the writer.
     */
    synchronized Built refuse(
            long newGeneration, List<Violation> newProblems, Instant now, Consumer<AllocationStatus> publish) {
        boolean changed = !newProblems.equals(problems) || newGeneration != generation;
        problems = newProblems;
        unfitUpdate = null; // a newer spec, refused before the node is asked
        generation = Math.max(generation, newGeneration);
        AllocRunner r = runner;
        AllocationStatus running = r == null ? null : AllocationStatuses.of(r.allocState(), tasks, built, now);
        built = AllocationStatuses.invalid(newProblems, newGeneration, running, built, now);
        publish.accept(built);
        return new Built(built, changed);
    }

    /**
     * The node cannot fit the allocation's new generation ({@code d} says why): Admitted=False for it, and the runner
     * keeps the definition it runs, as for a refused spec; one not started yet starts with the copy admitted before
     * (Pending until then). The status goes to {@code publish} under the lock.
     */
    synchronized Built refuseUpdate(long newGeneration, Decision d, Instant now, Consumer<AllocationStatus> publish) {
        boolean changed =
                unfitUpdate == null || !unfitUpdate.message().equals(d.message()) || newGeneration != unfitGeneration;
        unfitUpdate = d;
        unfitGeneration = newGeneration;
        problems = List.of();
        generation = Math.max(generation, newGeneration);
        AllocRunner r = runner;
        AllocationStatus running = r != null
                ? AllocationStatuses.of(r.allocState(), tasks, built, now)
                : AllocationStatuses.notStarted(latest, waitingForStore, built, now);
        built = AllocationStatuses.updateNotAdmitted(d, newGeneration, running, built, now);
        publish.accept(built);
        return new Built(built, changed);
    }

    /** Whether the node could not fit its newest generation ({@link #refuseUpdate}). */
    synchronized boolean updateUnfit() {
        return unfitUpdate != null;
    }

    /** A runner keeps its tasks (adding or removing tasks needs a new allocation): only definitions change. */
    synchronized void updateTasks(Allocation a, long newGeneration) {
        List<Task> now = new ArrayList<>();
        for (Task t : tasks) {
            Task newer = a.getSpec().task(t.getName());
            now.add(newer != null ? newer : t);
        }
        tasks = now;
        generation = Math.max(generation, newGeneration);
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

    /**
     * Waits to be taken on ({@link StartGate}) with {@code a}, admitted to the node, or follows the start under way
     * (applied once its runner runs). False when its runner was created since the caller saw none: {@code a} is then
     * an update of that runner, for the caller to apply.
     */
    synchronized boolean queue(Allocation a) {
        if (runner != null && !startUnderWay && !gone) {
            return false;
        }
        latest = a;
        return true;
    }

    /** Keeps a newer copy to apply once the runner being created runs; false, keeping nothing, when none is. */
    synchronized boolean queueIfStarting(Allocation a) {
        if (startUnderWay) {
            latest = a;
        }
        return startUnderWay;
    }

    /** Admitted by the gate: the copy to start, or null when it was deleted meanwhile or is started (or starting). */
    synchronized Allocation admitted() {
        if (gone || startUnderWay || runner != null) {
            return null; // one runner per allocation
        }
        startUnderWay = latest != null;
        return latest;
    }

    /**
     * Started with {@code started}, or {@code failed} to (it waits, admitted, to start again on its next change): a
     * newer copy that came meanwhile, or null.
     */
    synchronized Allocation startedWith(Allocation started, boolean failed) {
        Allocation newer = latest != started && !gone ? latest : null;
        latest = failed ? started : null;
        startUnderWay = false;
        return newer;
    }

    synchronized void starting(Allocation a, long newGeneration) {
        waitingForStore = null; // an older copy, if one waited for the store: this start replaces it
        tasks = a.getSpec().getTasks();
        serviceAccount = a.getSpec().effectiveServiceAccountName();
        generation = newGeneration;
    }

    /** The runner created for it; false when it was deleted while the runner was created (never to run). */
    synchronized boolean attach(AllocRunner created) {
        if (gone) {
            return false;
        }
        runner = created;
        List<Task> running = created.tasks();
        if (running.equals(tasks)) {
            tasks = running; // the runner's copy, not a third one (the informer's cache holds the newest)
        }
        return true;
    }

    /** The node cannot fit it: Failed with Admitted=False, for good (a later copy is not admitted again). */
    synchronized Built refuseAdmission(
            Allocation a, long newGeneration, Decision d, Instant now, Consumer<AllocationStatus> publish) {
        boolean first = !notAdmitted;
        notAdmitted = true;
        generation = Math.max(generation, newGeneration);
        built = AllocationStatuses.notAdmitted(d, newGeneration, a.getSpec().getTasks(), built, now);
        publish.accept(built);
        return new Built(built, first);
    }

    /** Whether the node could not fit it ({@link #refuseAdmission}). */
    boolean notAdmitted() {
        return notAdmitted;
    }

    /** The store could not write the spec of an allocation being taken on: Pending, with StateStored=False. */
    synchronized Built waitForStore(
            Allocation a, long newGeneration, String reason, Instant now, Consumer<AllocationStatus> publish) {
        waitingForStore = a;
        boolean first = !storeFailing;
        storeFailing = true;
        built = AllocationStatuses.awaitingStore(
                reason, newGeneration, a.getSpec().getTasks(), built, now);
        publish.accept(built);
        return new Built(built, first);
    }

    boolean waitsForStore() {
        return waitingForStore != null;
    }

    /** The store writes again: the copy that waited for it waits to start (unless a later one does); false if none. */
    synchronized boolean storeRecovered() {
        Allocation waiting = runner == null && !gone ? waitingForStore : null;
        waitingForStore = null;
        latest = latest == null ? waiting : latest;
        return waiting != null;
    }

    /** Deleted or replaced: nothing more is started for it. Returns its runner, if it has one. */
    synchronized AllocRunner markGone() {
        gone = true;
        return runner;
    }

    /**
     * Builds its status from the runner's {@code state}: the tasks it runs, a refused spec, the store's trouble and
     * the devices it holds, given by {@code devices} (null on an agent without devices; read only for a state that is
     * not older than the last). The status goes to {@code publish} under this allocation's lock, once the API server
     * has confirmed the allocation: task runners report from their own threads, and a status built from an older
     * state must not reach the writer after a newer one (it would stay, written, until the next change).
     */
    synchronized Change stateChanged(
            AllocState state,
            Optional<String> unstored,
            Supplier<List<AllocatedDevice>> devices,
            Instant now,
            Consumer<AllocationStatus> publish) {
        if (state.version() < builtVersion || tasks == null) {
            return new Change(null, owner, false, false, false, false, 0, false);
        }
        builtVersion = state.version();
        ClientStatus before = built == null ? null : built.getClientStatus();
        AllocationStatus status = AllocationStatuses.of(state, tasks, built, now);
        if (devices != null) {
            status.setAllocatedDevices(devices.get());
        }
        if (!problems.isEmpty()) {
            status = AllocationStatuses.invalid(problems, generation, status, built, now);
        }
        if (unfitUpdate != null) {
            status = AllocationStatuses.updateNotAdmitted(unfitUpdate, unfitGeneration, status, built, now);
        }
        status = AllocationStatuses.withStateStored(status, unstored, state.observedGeneration(), built, now);
        boolean storeChanged = unstored.isPresent() != storeFailing;
        storeFailing = unstored.isPresent();
        built = status;
        if (confirmed) {
            publish.accept(status);
        }
        long runningAfter = 0;
        if (state.clientStatus() == ClientStatus.Running && !wasRunning) {
            wasRunning = true;
            runningAfter = seenNanos == 0 ? 0 : System.nanoTime() - seenNanos;
        }
        boolean terminal = AllocationStatuses.isTerminal(status) && problems.isEmpty();
        boolean becameTerminal = terminal && terminalSince == null;
        if (becameTerminal) {
            terminalSince = now;
        } else if (!terminal) {
            terminalSince = null;
        }
        // A Failed allocation may still have tasks being killed (siblings of the one that failed): it is over for
        // its devices only once they are dead too.
        boolean ended = terminal && state.allDead();
        boolean tasksEnded = ended && !endedReported;
        endedReported = ended;
        return new Change(
                status,
                owner,
                storeChanged,
                becameTerminal,
                tasksEnded,
                state.clientStatus() != ClientStatus.Pending,
                runningAfter,
                // one the agent restored had its status before: only a change to Failed counts, or a first status
                // of one this agent's watch delivered
                status.getClientStatus() == ClientStatus.Failed
                        && before != ClientStatus.Failed
                        && (before != null || seenNanos != 0));
    }
}
