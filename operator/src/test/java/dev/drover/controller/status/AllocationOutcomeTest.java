package dev.drover.controller.status;

import static dev.drover.controller.status.AllocationStatusesTest.condition;
import static dev.drover.controller.status.AllocationStatusesTest.task;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocState;
import dev.drover.allocrunner.ClientStatuses;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.api.validation.Violation;
import dev.drover.controller.UnreadableAllocations;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Complete and Failed conditions of a terminal allocation, as a Job has them. */
class AllocationOutcomeTest {

    static final Instant T0 = Instant.parse("2026-11-27T10:00:00Z");
    static final Instant T1 = T0.plusSeconds(60);
    static final Instant T2 = T0.plusSeconds(3600);

    static TaskState state(TaskState.State s, boolean failed, TaskEvent... events) {
        TaskState ts = new TaskState();
        ts.setState(s);
        ts.setFailed(failed);
        ts.setRestarts(0);
        ts.setEvents(List.of(events));
        return ts;
    }

    static TaskEvent event(TaskEventType type, String message) {
        return TaskEvent.of(type, T0).withMessage(message);
    }

    static TaskEvent exit(int code) {
        return TaskEvent.of(TaskEventType.Terminated, T0).withExit(code, null).withMessage("Exit Code: " + code);
    }

    /** The status built from {@code states}, the client status following from them as the runner's does. */
    static AllocationStatus build(
            long version, List<Task> tasks, Map<String, TaskState> states, AllocationStatus previous, Instant now) {
        ClientStatuses.Result r = ClientStatuses.of(states.values());
        return AllocationStatuses.of(
                new AllocState(version, r.status(), r.description(), 1, states), tasks, previous, now);
    }

    static Task sidecar(String name) {
        Task t = task(name);
        t.setLifecycle(new Lifecycle(LifecycleHook.Poststart, true));
        return t;
    }

    @Test
    void aBatchWhoseTasksEndedIsCompleteSayingHowEachEnded() {
        List<Task> tasks = List.of(task("main"), sidecar("log"));
        Map<String, TaskState> states = new LinkedHashMap<>();
        states.put("main", state(TaskState.State.Dead, false, event(TaskEventType.Started, ""), exit(0)));
        states.put(
                "log",
                state(
                        TaskState.State.Dead,
                        false,
                        event(TaskEventType.MainTasksDead, "only sidecars left"),
                        event(TaskEventType.Killing, "Sent interrupt"),
                        event(TaskEventType.Killed, "Task successfully killed")));

        AllocationStatus s = build(1, tasks, states, null, T1);

        Condition complete = condition(s, "Complete");
        assertThat(complete.getStatus()).isEqualTo("True");
        assertThat(complete.getReason()).isEqualTo("TasksComplete");
        assertThat(complete.getMessage())
                .isEqualTo("All tasks have completed: \"main\" exited with code 0; \"log\" was killed (MainTasksDead)");
        assertThat(complete.getLastTransitionTime()).isEqualTo(T1.toString());
        assertThat(condition(s, "Failed"))
                .as("the other one is absent, as on a Job")
                .isNull();
        assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
    }

    @Test
    void aStoppedAllocationWhoseTasksWereKilledIsComplete() {
        Map<String, TaskState> states = Map.of(
                "web",
                state(
                        TaskState.State.Dead,
                        false,
                        event(TaskEventType.Started, ""),
                        event(TaskEventType.Killing, "Sent interrupt"),
                        event(TaskEventType.Killed, "Task successfully killed")));

        AllocationStatus s = build(1, List.of(task("web")), states, null, T1);

        assertThat(s.getClientStatus().name()).isEqualTo("Complete");
        assertThat(condition(s, "Complete").getMessage()).isEqualTo("All tasks have completed: \"web\" was killed");
        assertThat(condition(s, "Failed")).isNull();
    }

    @Test
    void spentRestartsFailTheAllocationNamingTheTaskItsLastEventAndItsExit() {
        List<Task> tasks = List.of(task("job"), task("other"));
        Map<String, TaskState> states = new LinkedHashMap<>();
        states.put(
                "job",
                state(
                        TaskState.State.Dead,
                        true,
                        exit(3),
                        event(
                                TaskEventType.NotRestarting,
                                "Exceeded allowed attempts 2 in interval 30m and mode is \"Fail\"")));
        states.put(
                "other",
                state(
                        TaskState.State.Dead,
                        false,
                        event(TaskEventType.SiblingTaskFailed, "Task's sibling \"job\" failed"),
                        event(TaskEventType.Killed, "Task successfully killed")));

        AllocationStatus s = build(1, tasks, states, null, T1);

        Condition failed = condition(s, "Failed");
        assertThat(failed.getStatus()).isEqualTo("True");
        assertThat(failed.getReason()).isEqualTo("RestartsExhausted");
        assertThat(failed.getMessage())
                .isEqualTo("Task \"job\" failed: NotRestarting: Exceeded allowed attempts 2 in interval 30m and mode is"
                        + " \"Fail\"; it last exited with code 3");
        assertThat(condition(s, "Complete")).isNull();
    }

    /** The event's text may carry an exception's, with bytes from a spec: kubectl describe must not run them. */
    @Test
    void theFailedMessageEscapesWhatTheEventsTextCarries() {
        Map<String, TaskState> states = Map.of(
                "web",
                state(
                        TaskState.State.Dead,
                        true,
                        event(TaskEventType.DriverFailure, "cannot open /srv/\u001b]0;owned\u0007\u009b2J: denied")));

        Condition failed = condition(build(1, List.of(task("web")), states, null, T1), "Failed");
        assertThat(failed.getMessage())
                .contains("cannot open /srv/\\u001b]0;owned\\u0007\\u009b2J: denied")
                .doesNotContain("\u001b", "\u0007", "\u009b");
    }

    @Test
    void aSetupFailureIsTheReason() {
        Map<String, TaskState> states = Map.of(
                "web",
                state(
                        TaskState.State.Dead,
                        true,
                        event(TaskEventType.SetupFailure, "Secret \"db\" not found: " + "x".repeat(5000))));

        Condition failed = condition(build(1, List.of(task("web")), states, null, T1), "Failed");

        assertThat(failed.getReason()).isEqualTo("SetupFailure");
        assertThat(failed.getMessage()).startsWith("Task \"web\" failed: SetupFailure: Secret \"db\" not found: xxx");
        assertThat(failed.getMessage().length()).as("the event's text is cut").isLessThan(400);
    }

    @Test
    void neitherWhileItRunsAndTheTransitionTimeIsWhenItEnded() {
        List<Task> tasks = List.of(task("job"));
        AllocationStatus running = build(
                1,
                tasks,
                Map.of("job", state(TaskState.State.Running, false, event(TaskEventType.Started, ""))),
                null,
                T0);
        assertThat(condition(running, "Complete")).isNull();
        assertThat(condition(running, "Failed")).isNull();

        Map<String, TaskState> done = Map.of("job", state(TaskState.State.Dead, false, exit(0)));
        AllocationStatus complete = build(2, tasks, done, running, T1);
        assertThat(condition(complete, "Complete").getLastTransitionTime()).isEqualTo(T1.toString());

        AllocationStatus again = build(3, tasks, done, complete, T2);
        assertThat(again).as("nothing changed: the writer skips it").isEqualTo(complete);
    }

    @Test
    void aRestartedAgentBuildsTheSameConditionsFromTheApiServersCopy() {
        List<Task> tasks = List.of(task("job"));
        Map<String, TaskState> states = Map.of(
                "job",
                state(
                        TaskState.State.Dead,
                        true,
                        exit(1),
                        event(TaskEventType.NotRestarting, "Policy allows no restarts")));
        AllocationStatus written = build(7, tasks, states, null, T1);

        // the new agent starts from the API server's copy (as JSON) and the tasks' states its store kept
        AllocationStatus fromApi = UnreadableAllocations.serialization()
                .unmarshal(UnreadableAllocations.serialization().asJson(written), AllocationStatus.class);
        Map<String, TaskState> restored = Map.of(
                "job",
                UnreadableAllocations.serialization()
                        .unmarshal(UnreadableAllocations.serialization().asJson(states.get("job")), TaskState.class));
        AllocationStatus rebuilt = build(1, tasks, restored, fromApi, T2);

        assertThat(rebuilt).isEqualTo(written);
        assertThat(condition(rebuilt, "Failed").getLastTransitionTime()).isEqualTo(T1.toString());
    }

    @Test
    void aRefusedSpecAndAnAllocationTheNodeCannotFitAreFailed() {
        AllocationStatus refused = AllocationStatuses.invalid(
                List.of(new Violation("spec.tasks[0].driver", "must be set")), 1, null, null, T1);
        assertThat(condition(refused, "Failed").getReason()).isEqualTo("InvalidSpec");
        assertThat(condition(refused, "Failed").getMessage()).contains("spec.tasks[0].driver");

        AllocationStatus notAdmitted = AllocationStatuses.notAdmitted(
                new Decision(false, "OutOfmemory", "Node didn't have enough resource: memory", Map.of()),
                1,
                List.of(task("web")),
                null,
                T1);
        assertThat(condition(notAdmitted, "Failed").getReason()).isEqualTo("OutOfmemory");
        assertThat(condition(notAdmitted, "Complete")).isNull();
    }
}
