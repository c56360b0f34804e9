package dev.drover.controller.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Ready and Healthy of allocations whose tasks have checks. */
class AllocationStatusesTest {

    static final Instant NOW = Instant.parse("2026-11-27T10:00:00Z");

    static Task task(String name, String... checks) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        if (checks.length > 0) {
            t.setChecks(List.of(checks).stream()
                    .map(c -> {
                        Check check = new Check(c, CheckType.TCP);
                        check.setPort(new IntOrString(8080));
                        return check;
                    })
                    .toList());
        }
        return t;
    }

    static TaskState running(CheckStatus... checks) {
        TaskState s = new TaskState();
        s.setState(TaskState.State.Running);
        s.setRestarts(0);
        s.setChecks(checks.length == 0 ? null : List.of(checks));
        return s;
    }

    static CheckStatus check(String name, Status status, String output) {
        return new CheckStatus(name, status, output, "2026-11-27T09:59:00Z");
    }

    static AllocationStatus status(List<Task> tasks, Map<String, TaskState> states) {
        return AllocationStatuses.of(
                new AllocState(1, ClientStatus.Running, "Tasks are running", 1, states), tasks, null, NOW);
    }

    static Condition condition(AllocationStatus s, String type) {
        return s.getConditions().stream()
                .filter(c -> type.equals(c.getType()))
                .findFirst()
                .orElse(null);
    }

    @Test
    void withoutChecksReadyIsAsBeforeAndThereIsNoHealthyCondition() {
        AllocationStatus s = status(List.of(task("web")), Map.of("web", running()));
        assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
        assertThat(condition(s, "Ready").getReason()).isEqualTo("TasksRunning");
        assertThat(condition(s, "Healthy")).isNull();
    }

    @Test
    void everyCheckPassingMakesTheAllocationReadyAndHealthy() {
        List<Task> tasks = List.of(task("web", "http", "tcp"), task("worker"));
        Map<String, TaskState> states = new LinkedHashMap<>();
        states.put("web", running(check("http", Status.PASSING, "HTTP 200"), check("tcp", Status.PASSING, "")));
        states.put("worker", running());
        AllocationStatus s = status(tasks, states);
        assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
        assertThat(condition(s, "Healthy").getStatus()).isEqualTo("True");
        assertThat(condition(s, "Healthy").getReason()).isEqualTo("ChecksPassing");
        assertThat(s.getReady()).isEqualTo("2/2");
        assertThat(s.getTaskStates().get("web").getChecks())
                .extracting(CheckStatus::getName)
                .containsExactly("http", "tcp");
    }

    @Test
    void aCriticalCheckMakesReadyFalseNamingTaskCheckAndOutput() {
        List<Task> tasks = List.of(task("web", "http", "tcp"));
        AllocationStatus s = status(
                tasks,
                Map.of(
                        "web",
                        running(
                                check("http", Status.WARNING, "HTTP 429: slow down"),
                                check("tcp", Status.CRITICAL, "connection refused"))));
        Condition healthy = condition(s, "Healthy");
        assertThat(healthy.getStatus()).isEqualTo("False");
        assertThat(healthy.getReason()).as("critical before warning").isEqualTo("CheckCritical");
        assertThat(healthy.getMessage()).isEqualTo("Task \"web\": check \"tcp\" is critical: connection refused");
        Condition ready = condition(s, "Ready");
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("Unhealthy");
        assertThat(ready.getMessage()).isEqualTo(healthy.getMessage());
        assertThat(s.getReady()).as("the READY column counts running tasks").isEqualTo("1/1");
    }

    @Test
    void aWarningCheckIsNotHealthyEither() {
        AllocationStatus s = status(
                List.of(task("web", "http")), Map.of("web", running(check("http", Status.WARNING, "x".repeat(5000)))));
        Condition healthy = condition(s, "Healthy");
        assertThat(healthy.getReason()).isEqualTo("CheckWarning");
        assertThat(healthy.getMessage()).startsWith("Task \"web\": check \"http\" is warning: xxx");
        assertThat(healthy.getMessage().length()).as("the output is cut").isLessThan(500);
        assertThat(condition(s, "Ready").getReason()).isEqualTo("Unhealthy");
    }

    @Test
    void checksNotReportedYetAreNotPassing() {
        AllocationStatus s = status(List.of(task("web", "http")), Map.of("web", running()));
        assertThat(condition(s, "Healthy").getMessage())
                .isEqualTo("Task \"web\": check \"http\" is critical: no probe has run yet");
        assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
    }

    @Test
    void aDoneLifecycleTaskWithChecksDoesNotKeepTheAllocationUnhealthy() {
        Task init = task("init", "ready");
        init.setLifecycle(new Lifecycle(LifecycleHook.Prestart, false));
        TaskState done = new TaskState();
        done.setState(TaskState.State.Dead);
        done.setRestarts(0);
        AllocationStatus s = status(
                List.of(init, task("web", "http")),
                Map.of("init", done, "web", running(check("http", Status.PASSING, "ok"))));
        assertThat(condition(s, "Healthy").getStatus()).isEqualTo("True");
        assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    }

    @Test
    void aMainTaskThatIsDoneHasNoChecksToPass() {
        TaskState done = new TaskState();
        done.setState(TaskState.State.Dead);
        done.setRestarts(0);
        AllocationStatus s = AllocationStatuses.of(
                new AllocState(1, ClientStatus.Complete, "All tasks have completed", 1, Map.of("web", done)),
                List.of(task("web", "http")),
                null,
                NOW);
        assertThat(condition(s, "Healthy").getStatus()).isEqualTo("True");
        assertThat(condition(s, "Ready").getReason()).isEqualTo("Complete");
    }

    @Test
    void aMainTaskWithChecksThatIsNotRunningIsNotHealthy() {
        TaskState pending = new TaskState();
        pending.setState(TaskState.State.Pending);
        pending.setRestarts(1);
        AllocationStatus s = AllocationStatuses.of(
                new AllocState(1, ClientStatus.Pending, "Restarting", 1, Map.of("web", pending)),
                List.of(task("web", "http")),
                null,
                NOW);
        assertThat(condition(s, "Healthy").getMessage())
                .isEqualTo("Task \"web\": check \"http\" is critical: the task is not running");
        assertThat(condition(s, "Ready").getReason())
                .as("its tasks say why first")
                .isEqualTo("Pending");
    }
}
