package dev.drover.allocrunner;

import static dev.drover.allocrunner.LifecycleCoordinatorTest.DONE;
import static dev.drover.allocrunner.LifecycleCoordinatorTest.FAILED;
import static dev.drover.allocrunner.LifecycleCoordinatorTest.RUNNING;
import static dev.drover.allocrunner.LifecycleCoordinatorTest.task;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class SiblingRulesTest {

    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

    final Task app = task("app", null, false);
    final Task worker = task("worker", null, false);
    final Task proxy = task("proxy", LifecycleHook.Poststart, true);
    final Task cleanup = task("cleanup", LifecycleHook.Poststop, false);

    Optional<TaskEvent> cause(List<Task> tasks, Map<String, LifecycleCoordinator.Status> statuses) {
        return SiblingRules.killCause(tasks, statuses, CLOCK).map(Supplier::get);
    }

    @Test
    void aFailedTaskKillsItsSiblingsNamingIt() {
        TaskEvent e = cause(List.of(app, worker), Map.of("app", RUNNING, "worker", FAILED))
                .orElseThrow();
        assertThat(e.getType()).isEqualTo(TaskEventType.SiblingTaskFailed);
        assertThat(e.getFailedSibling()).isEqualTo("worker");
    }

    @Test
    void aLeaderThatEndsWellKillsTheOthers() {
        app.setLeader(true);
        assertThat(cause(List.of(app, worker), Map.of("app", DONE, "worker", RUNNING)))
                .hasValueSatisfying(e -> assertThat(e.getType()).isEqualTo(TaskEventType.LeaderTaskDead));
    }

    @Test
    void aFailureOutranksALeaderThatEnded() {
        app.setLeader(true);
        assertThat(cause(List.of(app, worker), Map.of("app", DONE, "worker", FAILED)))
                .hasValueSatisfying(e -> assertThat(e.getType()).isEqualTo(TaskEventType.SiblingTaskFailed));
    }

    @Test
    void sidecarsLeftAloneAreKilled() {
        assertThat(cause(List.of(app, proxy), Map.of("app", DONE, "proxy", RUNNING)))
                .hasValueSatisfying(e -> assertThat(e.getType()).isEqualTo(TaskEventType.MainTasksDead));
    }

    @Test
    void aMainTaskThatEndsWellWhileAnotherRunsKillsNothing() {
        assertThat(cause(List.of(app, worker, proxy), Map.of("app", DONE, "worker", RUNNING, "proxy", RUNNING)))
                .isEmpty();
    }

    @Test
    void poststopTasksTakeNoPart() {
        assertThat(cause(List.of(app, cleanup), Map.of("app", RUNNING, "cleanup", FAILED)))
                .isEmpty();
        assertThat(cause(List.of(app, proxy, cleanup), Map.of("app", DONE, "proxy", DONE, "cleanup", RUNNING)))
                .isEmpty();
    }
}
