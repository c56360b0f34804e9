package dev.drover.controller.status;

import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.api.validation.Violation;
import dev.drover.common.UserText;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code status} the API server gets, built from what a runner made of its
 * allocation. Conditions keep their {@code lastTransitionTime} while their
 * status stays the same, so an unchanged allocation yields an equal status
 * (and the writer skips it).
 */
public final class AllocationStatuses {

    static final String READY = "Ready";
    static final String SPEC_VALID = "SpecValid";
    static final String INVALID_SPEC = "InvalidSpec";
    public static final String STATE_STORED = "StateStored";
    public static final String STATE_STORE_FAILED = "StateStoreFailed";
    static final String ADMITTED = NodeAdmission.ADMITTED;

    /** The generation of {@code a}'s spec; 0 when the API server gave none. */
    public static long generationOf(Allocation a) {
        Long g = a.getMetadata().getGeneration();
        return g == null ? 0 : g;
    }

    private AllocationStatuses() {}

    /**
     * @param tasks    the allocation's tasks (which are main tasks)
     * @param previous the status last built for the allocation, or null
     */
    public static AllocationStatus of(AllocState state, List<Task> tasks, AllocationStatus previous, Instant now) {
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(state.clientStatus());
        s.setClientDescription(state.clientDescription());
        s.setObservedGeneration(state.observedGeneration());
        Map<String, TaskState> taskStates = new LinkedHashMap<>();
        for (Task t : tasks) {
            TaskState ts = state.taskStates().get(t.getName());
            if (ts != null) {
                taskStates.put(t.getName(), ts);
            }
        }
        s.setTaskStates(taskStates);
        s.setNetwork(state.network() != null ? state.network() : previous == null ? null : previous.getNetwork());
        int main = 0;
        int running = 0;
        int restarts = 0;
        for (Task t : tasks) {
            TaskState ts = taskStates.get(t.getName());
            if (t.isMain()) {
                main++;
                if (ts != null && ts.getState() == TaskState.State.Running) {
                    running++;
                }
            }
            if (ts != null && ts.getRestarts() != null) {
                restarts += ts.getRestarts();
            }
        }
        s.setReady(running + "/" + main);
        s.setRestarts(restarts);
        boolean tasksReady = state.clientStatus() == ClientStatus.Running && running == main && main > 0;
        Optional<AllocationHealth> health = AllocationHealth.of(tasks, taskStates);
        boolean ready = tasksReady && health.map(AllocationHealth::healthy).orElse(true);
        List<Condition> conditions = new ArrayList<>();
        conditions.add(condition(
                READY,
                ready,
                ready
                        ? "TasksRunning"
                        : tasksReady
                                ? AllocationHealth.UNHEALTHY
                                : state.clientStatus().name(),
                tasksReady && !ready ? health.get().message() : state.clientDescription(),
                state.observedGeneration(),
                previous,
                now));
        health.ifPresent(h -> conditions.add(condition(
                AllocationHealth.HEALTHY,
                h.healthy(),
                h.reason(),
                h.message(),
                state.observedGeneration(),
                previous,
                now)));
        AllocationOutcome.of(state.clientStatus(), tasks, taskStates)
                .ifPresent(o -> conditions.add(outcome(o, state.observedGeneration(), previous, now)));
        conditions.add(condition(
                SPEC_VALID,
                true,
                "Accepted",
                "The agent accepted the allocation's spec",
                state.observedGeneration(),
                previous,
                now));
        conditions.add(condition(
                ADMITTED,
                true,
                ADMITTED,
                "The node had room for the allocation's requests",
                state.observedGeneration(),
                previous,
                now));
        s.setConditions(conditions);
        return s;
    }

    /**
     * The status of an allocation the node cannot fit ({@code d} says why): Failed, never run, with
     * {@code Admitted=False} and {@code d}'s reason ({@code OutOfcpu}, {@code OutOfmemory} or {@code OutOfdevices}).
     */
    public static AllocationStatus notAdmitted(
            Decision d, long generation, List<Task> tasks, AllocationStatus previous, Instant now) {
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(ClientStatus.Failed);
        s.setClientDescription(d.message());
        s.setObservedGeneration(generation);
        s.setReady("0/" + tasks.stream().filter(Task::isMain).count());
        s.setRestarts(0);
        s.getConditions().add(condition(READY, false, d.reason(), d.message(), generation, previous, now));
        s.getConditions()
                .add(outcome(
                        AllocationOutcome.failedBeforeRunning(d.reason(), d.message()), generation, previous, now));
        s.getConditions()
                .add(condition(
                        SPEC_VALID,
                        true,
                        "Accepted",
                        "The agent accepted the allocation's spec",
                        generation,
                        previous,
                        now));
        s.getConditions().add(condition(ADMITTED, false, d.reason(), d.message(), generation, previous, now));
        return s;
    }

    /**
     * The status of an admitted allocation that has not started yet: Pending, as the copy it is to start with has it
     * ({@code queued} for a start slot, else {@code awaitingStore}, the one waiting for the store, if any). One that
     * waits for the store keeps its {@code StateStored=False}.
     */
    public static AllocationStatus notStarted(
            Allocation queued, Allocation awaitingStore, AllocationStatus previous, Instant now) {
        Allocation toStart = queued != null ? queued : awaitingStore;
        List<Task> tasks = toStart == null || toStart.getSpec().getTasks() == null
                ? List.of()
                : toStart.getSpec().getTasks();
        long generation = toStart == null ? 0 : generationOf(toStart);
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(ClientStatus.Pending);
        s.setClientDescription("Admitted; no tasks have started");
        s.setObservedGeneration(generation);
        s.setReady("0/" + tasks.stream().filter(Task::isMain).count());
        s.setRestarts(0);
        s.getConditions()
                .add(condition(
                        READY,
                        false,
                        ClientStatus.Pending.name(),
                        s.getClientDescription(),
                        generation,
                        previous,
                        now));
        s.getConditions()
                .add(condition(
                        SPEC_VALID,
                        true,
                        "Accepted",
                        "The agent accepted the allocation's spec",
                        generation,
                        previous,
                        now));
        if (awaitingStore != null && previous != null && previous.getConditions() != null) {
            previous.getConditions().stream()
                    .filter(c -> STATE_STORED.equals(c.getType()))
                    .map(c -> new ConditionBuilder(c).build())
                    .forEach(s.getConditions()::add);
        }
        return s;
    }

    /**
     * The status of a running allocation whose newest generation the node cannot fit ({@code d} says why):
     * {@code running}, the status of the definition it runs on, with {@code Admitted=False} and {@code d}'s reason
     * for {@code generation}.
     */
    public static AllocationStatus updateNotAdmitted(
            Decision d, long generation, AllocationStatus running, AllocationStatus previous, Instant now) {
        running.setObservedGeneration(generation);
        running.getConditions().removeIf(c -> c.getType().equals(ADMITTED));
        running.getConditions().add(condition(ADMITTED, false, d.reason(), d.message(), generation, previous, now));
        return running;
    }

    /**
     * The status of an allocation the agent refused to run: Failed, with a
     * condition naming every bad field. {@code running} is the status of a runner
     * that keeps the last good spec, or null when none runs.
     */
    public static AllocationStatus invalid(
            List<Violation> problems,
            long generation,
            AllocationStatus running,
            AllocationStatus previous,
            Instant now) {
        String message = describe(problems);
        AllocationStatus s;
        if (running != null) {
            s = running;
        } else {
            s = new AllocationStatus();
            s.setClientStatus(ClientStatus.Failed);
            s.setClientDescription("Invalid allocation: " + message);
            s.setReady("0/0");
            s.setRestarts(0);
            s.getConditions()
                    .add(condition(
                            READY, false, INVALID_SPEC, "Invalid allocation: " + message, generation, previous, now));
            s.getConditions()
                    .add(outcome(
                            AllocationOutcome.failedBeforeRunning(INVALID_SPEC, "Invalid allocation: " + message),
                            generation,
                            previous,
                            now));
        }
        s.setObservedGeneration(generation);
        s.getConditions().removeIf(c -> c.getType().equals(SPEC_VALID));
        s.getConditions().add(condition(SPEC_VALID, false, INVALID_SPEC, message, generation, previous, now));
        return s;
    }

    /**
     * Adds {@code StateStored}: False while some of the allocation's state waits to be written again
     * ({@code unstored} says why), True once it was written after such a wait. An allocation whose state the
     * store never failed has no such condition.
     */
    public static AllocationStatus withStateStored(
            AllocationStatus s,
            java.util.Optional<String> unstored,
            long generation,
            AllocationStatus previous,
            Instant now) {
        boolean hadIt = previous != null
                && previous.getConditions() != null
                && previous.getConditions().stream().anyMatch(c -> STATE_STORED.equals(c.getType()));
        if (unstored.isEmpty() && !hadIt) {
            return s;
        }
        s.getConditions().removeIf(c -> STATE_STORED.equals(c.getType()));
        s.getConditions()
                .add(
                        unstored.isPresent()
                                ? condition(
                                        STATE_STORED,
                                        false,
                                        STATE_STORE_FAILED,
                                        "The agent cannot write this allocation's state to" + " its store ("
                                                + unstored.get()
                                                + "); tasks keep running and the agent retries with back-off",
                                        generation,
                                        previous,
                                        now)
                                : condition(
                                        STATE_STORED,
                                        true,
                                        "Stored",
                                        "The agent's state store holds this allocation's state",
                                        generation,
                                        previous,
                                        now));
        return s;
    }

    /**
     * The status of an allocation not taken on yet because the store could not write its spec (a full disk):
     * Pending, not refused; it is taken on once the store writes again.
     */
    public static AllocationStatus awaitingStore(
            String reason, long generation, List<Task> tasks, AllocationStatus previous, Instant now) {
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(ClientStatus.Pending);
        s.setClientDescription("Waiting for the agent's state store to write again");
        s.setObservedGeneration(generation);
        s.setReady("0/" + tasks.stream().filter(Task::isMain).count());
        s.setRestarts(0);
        s.getConditions()
                .add(condition(
                        READY,
                        false,
                        STATE_STORE_FAILED,
                        "Not taken on yet: the agent's state store" + " cannot write",
                        generation,
                        previous,
                        now));
        return withStateStored(s, java.util.Optional.of(reason), generation, previous, now);
    }

    /** "spec.tasks[0].name: ...; spec.restartPolicy.mode: ...", the first few and how many more. */
    public static String describe(List<Violation> problems) {
        return UserText.join(problems.stream().map(Violation::toString).toList(), "; ");
    }

    public static boolean isTerminal(AllocationStatus s) {
        return s != null
                && (s.getClientStatus() == ClientStatus.Complete
                        || s.getClientStatus() == ClientStatus.Failed
                        || s.getClientStatus() == ClientStatus.Lost);
    }

    /**
     * Whether {@code s} is a terminal status for {@code generation}, written by an agent: the allocation ran and was
     * collected (or its directory was lost), and is never run again.
     */
    public static boolean ranBefore(AllocationStatus s, long generation) {
        if (!isTerminal(s)) {
            return false;
        }
        boolean refusedOlderSpec =
                refusedSpec(s) && (s.getObservedGeneration() == null || s.getObservedGeneration() < generation);
        return !refusedOlderSpec;
    }

    static boolean refusedSpec(AllocationStatus s) {
        return s != null
                && s.getConditions() != null
                && s.getConditions().stream()
                        .anyMatch(c -> SPEC_VALID.equals(c.getType()) && "False".equals(c.getStatus()));
    }

    /** {@code Complete} or {@code Failed}, True: the other is absent, as on a Job. */
    private static Condition outcome(AllocationOutcome o, long generation, AllocationStatus previous, Instant now) {
        return condition(o.type(), true, o.reason(), o.message(), generation, previous, now);
    }

    private static Condition condition(
            String type,
            boolean status,
            String reason,
            String message,
            long generation,
            AllocationStatus previous,
            Instant now) {
        String value = status ? "True" : "False";
        String since = now.truncatedTo(ChronoUnit.SECONDS).toString();
        if (previous != null && previous.getConditions() != null) {
            for (Condition c : previous.getConditions()) {
                if (type.equals(c.getType()) && value.equals(c.getStatus()) && c.getLastTransitionTime() != null) {
                    since = c.getLastTransitionTime();
                }
            }
        }
        return new ConditionBuilder()
                .withType(type)
                .withStatus(value)
                .withReason(reason)
                .withMessage(message)
                .withObservedGeneration(generation)
                .withLastTransitionTime(since)
                .build();
    }
}
