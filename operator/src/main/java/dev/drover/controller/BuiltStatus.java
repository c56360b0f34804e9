package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.validation.Violation;
import dev.drover.controller.status.AllocationStatuses;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The status last built for one tracked allocation and what every status built after it carries: its spec's
 * problems, a generation the node could not fit, the store's trouble, when it became terminal. Guarded by the
 * {@link TrackedAllocation} that owns it: each method is called with that allocation's lock held.
 */
final class BuiltStatus {

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
            boolean enteredFailed) {

        static Change dropped(Allocation owner) {
            return new Change(null, owner, false, false, false, false, 0, false);
        }
    }

    /** When the agent first saw it (nanoTime), for the seen→running histogram; 0 for restored ones. */
    private final long seenNanos;

    private AllocationStatus built;
    private long builtVersion = -1;
    private List<Violation> problems = List.of();
    /** Why the node could not fit its newest generation, which it does not run; null when it runs the newest. */
    private Decision unfitUpdate;
    /** That generation (one not started yet starts with an older one). */
    private long unfitGeneration;
    /** Some of its state waits to be written again (StateStored=False reported). */
    private boolean storeFailing;

    private boolean wasRunning;
    /** Read without the lock by the garbage collector. */
    private volatile Instant terminalSince;
    /** Terminal with every task dead was reported: its devices were freed. */
    private boolean endedReported;

    BuiltStatus(long seenNanos) {
        this.seenNanos = seenNanos;
    }

    AllocationStatus current() {
        return built;
    }

    Optional<Instant> terminalSince() {
        return Optional.ofNullable(terminalSince);
    }

    /**
     * The API server's status, kept when none was built here, or only one built before the API server confirmed the
     * allocation ({@code beforeConfirmed}, from a restored runner's reattached tasks): its conditions' transition
     * times survive restarts, and a status that did not change is not written again.
     */
    void observed(AllocationStatus onServer, boolean beforeConfirmed) {
        if ((built == null || beforeConfirmed) && onServer != null) {
            built = onServer;
        }
    }

    /** Its spec is valid (again) and fits the node; returns whether it was refused before. */
    boolean accept() {
        boolean wasRefused = !problems.isEmpty() || unfitUpdate != null;
        problems = List.of();
        unfitUpdate = null;
        return wasRefused;
    }

    boolean updateUnfit() {
        return unfitUpdate != null;
    }

    /**
     * Generation {@code newGeneration} of the spec cannot be run ({@code generation}: the newest seen before); the
     * status keeps what {@code running} (the runner's state, or null) shows.
     */
    Built refuse(
            long newGeneration,
            long generation,
            List<Violation> newProblems,
            AllocState running,
            List<Task> tasks,
            Instant now) {
        boolean changed = !newProblems.equals(problems) || newGeneration != generation;
        problems = newProblems;
        unfitUpdate = null; // a newer spec, refused before the node is asked
        AllocationStatus shown = running == null ? null : AllocationStatuses.of(running, tasks, built, now);
        built = AllocationStatuses.invalid(newProblems, newGeneration, shown, built, now);
        return new Built(built, changed);
    }

    /** The node cannot fit generation {@code newGeneration}; {@code running} is what the allocation shows meanwhile. */
    Built refuseUpdate(long newGeneration, Decision d, AllocationStatus running, Instant now) {
        boolean changed =
                unfitUpdate == null || !unfitUpdate.message().equals(d.message()) || newGeneration != unfitGeneration;
        unfitUpdate = d;
        unfitGeneration = newGeneration;
        problems = List.of();
        built = AllocationStatuses.updateNotAdmitted(d, newGeneration, running, built, now);
        return new Built(built, changed);
    }

    /** The node cannot fit the allocation: Failed with Admitted=False; {@code first} when it was not refused before. */
    Built notAdmitted(Decision d, long generation, List<Task> tasks, boolean first, Instant now) {
        built = AllocationStatuses.notAdmitted(d, generation, tasks, built, now);
        return new Built(built, first);
    }

    /** The store could not write the spec: Pending, with StateStored=False. */
    Built awaitingStore(String reason, long generation, List<Task> tasks, Instant now) {
        boolean first = !storeFailing;
        storeFailing = true;
        built = AllocationStatuses.awaitingStore(reason, generation, tasks, built, now);
        return new Built(built, first);
    }

    /**
     * Builds the status from the runner's {@code state}: the {@code tasks} it runs, a refused spec, the store's
     * trouble ({@code unstored}) and the devices it holds, given by {@code devices} (null on an agent without devices;
     * read only for a state that is not older than the last).
     */
    Change fromState(
            AllocState state,
            List<Task> tasks,
            long generation,
            Optional<String> unstored,
            Supplier<List<AllocatedDevice>> devices,
            Allocation owner,
            Instant now) {
        if (state.version() < builtVersion) {
            return Change.dropped(owner);
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
