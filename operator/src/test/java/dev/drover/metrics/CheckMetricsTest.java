package dev.drover.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.TaskState;
import io.prometheus.client.CollectorRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CheckMetricsTest {

    final CollectorRegistry registry = new CollectorRegistry();
    final CheckMetrics metrics = new CheckMetrics().register(registry);

    static TaskState task(TaskState.State state, CheckStatus... checks) {
        TaskState s = new TaskState();
        s.setState(state);
        s.setChecks(checks.length == 0 ? null : List.of(checks));
        return s;
    }

    static CheckStatus check(String name, Status status) {
        return new CheckStatus(name, status, "", "2026-11-27T10:00:00Z");
    }

    Double status(String alloc, String check, String status) {
        return registry.getSampleValue(
                "drover_check_status",
                new String[] {"namespace", "allocation", "task", "check", "status"},
                new String[] {"default", alloc, "web", check, status});
    }

    Double transitions(String alloc, String check, String to) {
        return registry.getSampleValue(
                "drover_check_transitions_total",
                new String[] {"namespace", "allocation", "task", "check", "to"},
                new String[] {"default", alloc, "web", check, to});
    }

    @Test
    void eachCheckHasOneForItsStatusAndZeroForTheOthers() {
        metrics.states(
                "default",
                "a",
                "uid-a",
                1,
                Map.of(
                        "web",
                        task(TaskState.State.Running, check("http", Status.WARNING), check("tcp", Status.PASSING))));
        assertThat(status("a", "http", "warning")).isEqualTo(1.0);
        assertThat(status("a", "http", "passing")).isEqualTo(0.0);
        assertThat(status("a", "http", "critical")).isEqualTo(0.0);
        assertThat(status("a", "tcp", "passing")).isEqualTo(1.0);
    }

    @Test
    void anOlderStateChangesNothingAndATaskBetweenRunsHasNoStatusSeries() {
        metrics.states(
                "default",
                "a",
                "uid-a",
                5,
                Map.of("web", task(TaskState.State.Running, check("http", Status.PASSING))));
        metrics.states(
                "default",
                "a",
                "uid-a",
                4,
                Map.of("web", task(TaskState.State.Running, check("http", Status.CRITICAL))));
        assertThat(status("a", "http", "passing")).isEqualTo(1.0);

        metrics.transition("default", "a", "uid-a", "web", "http", Status.CRITICAL);
        metrics.states("default", "a", "uid-a", 6, Map.of("web", task(TaskState.State.Pending)));
        assertThat(status("a", "http", "passing")).isNull();
        assertThat(transitions("a", "http", "critical"))
                .as("kept while the allocation lives")
                .isEqualTo(1.0);
    }

    @Test
    void anAllocationWhoseTasksAreAllDeadLeavesNoSeries() {
        metrics.states(
                "default",
                "a",
                "uid-a",
                1,
                Map.of("web", task(TaskState.State.Running, check("http", Status.PASSING))));
        metrics.transition("default", "a", "uid-a", "web", "http", Status.PASSING);
        metrics.states(
                "default",
                "b",
                "uid-b",
                1,
                Map.of("web", task(TaskState.State.Running, check("http", Status.PASSING))));

        metrics.states("default", "a", "uid-a", 2, Map.of("web", task(TaskState.State.Dead)));
        metrics.states(
                "default",
                "a",
                "uid-a",
                1,
                Map.of("web", task(TaskState.State.Running, check("http", Status.PASSING))));
        metrics.transition("default", "a", "uid-a", "web", "http", Status.CRITICAL);

        assertThat(status("a", "http", "passing"))
                .as("a late, older state does not bring it back")
                .isNull();
        assertThat(transitions("a", "http", "passing")).isNull();
        assertThat(transitions("a", "http", "critical")).isNull();
        assertThat(status("b", "http", "passing"))
                .as("other allocations keep theirs")
                .isEqualTo(1.0);
    }

    @Test
    void anAllocationCreatedAgainUnderTheSameNameCountsItsVersionsAfresh() {
        metrics.states(
                "default",
                "a",
                "uid-a",
                9,
                Map.of("web", task(TaskState.State.Running, check("http", Status.PASSING))));
        metrics.transition("default", "a", "uid-a", "web", "http", Status.PASSING);
        metrics.states("default", "a", "uid-a", 10, Map.of("web", task(TaskState.State.Dead)));

        metrics.states(
                "default",
                "a",
                "uid-a2",
                1,
                Map.of("web", task(TaskState.State.Running, check("http", Status.CRITICAL))));
        assertThat(status("a", "http", "critical")).isEqualTo(1.0);
        assertThat(transitions("a", "http", "passing"))
                .as("the first one's counts went with it")
                .isNull();
    }
}
