package dev.drover.allocrunner;

import static dev.drover.allocrunner.LifecycleCoordinator.Gate.MAIN;
import static dev.drover.allocrunner.LifecycleCoordinator.Gate.POSTSTART;
import static dev.drover.allocrunner.LifecycleCoordinator.Gate.POSTSTOP;
import static dev.drover.allocrunner.LifecycleCoordinator.Gate.PRESTART;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LifecycleCoordinatorTest {

    static Task task(String name, LifecycleHook hook, boolean sidecar) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        if (hook != null) {
            t.setLifecycle(new Lifecycle(hook, sidecar));
        }
        return t;
    }

    static final LifecycleCoordinator.Status PENDING = new LifecycleCoordinator.Status(TaskState.State.Pending, false);
    static final LifecycleCoordinator.Status RUNNING = new LifecycleCoordinator.Status(TaskState.State.Running, false);
    static final LifecycleCoordinator.Status DONE = new LifecycleCoordinator.Status(TaskState.State.Dead, false);
    static final LifecycleCoordinator.Status FAILED = new LifecycleCoordinator.Status(TaskState.State.Dead, true);

    final Task init = task("init", LifecycleHook.Prestart, false);
    final Task proxy = task("proxy", LifecycleHook.Prestart, true);
    final Task app = task("app", null, false);
    final Task after = task("after", LifecycleHook.Poststart, false);
    final Task cleanup = task("cleanup", LifecycleHook.Poststop, false);
    final LifecycleCoordinator c = new LifecycleCoordinator(List.of(init, proxy, app, after, cleanup));
    final Map<String, LifecycleCoordinator.Status> states = new HashMap<>();

    @Test
    void mainStartsOnlyAfterEphemeralPrestartExitsZeroAndSidecarRuns() {
        assertThat(c.update(states)).containsExactly(PRESTART);
        states.put("init", RUNNING);
        states.put("proxy", RUNNING);
        assertThat(c.update(states)).containsExactly(PRESTART);
        states.put("init", DONE);
        assertThat(c.update(states)).contains(MAIN).doesNotContain(POSTSTART);
        assertThat(c.mayStart(app)).isTrue();
        assertThat(c.mayStart(after)).isFalse();
    }

    @Test
    void aFailedPrestartNeverOpensMain() {
        states.put("init", FAILED);
        states.put("proxy", RUNNING);
        assertThat(c.update(states)).containsExactly(PRESTART);
    }

    @Test
    void poststartWaitsUntilNoMainTaskIsPending() {
        states.put("init", DONE);
        states.put("proxy", RUNNING);
        c.update(states);
        assertThat(c.update(states)).doesNotContain(POSTSTART);
        states.put("app", RUNNING);
        assertThat(c.update(states)).contains(POSTSTART);
    }

    @Test
    void poststopRunsOnceEveryOtherTaskIsDeadAndGatesNeverClose() {
        states.put("init", DONE);
        states.put("proxy", RUNNING);
        states.put("app", RUNNING);
        c.update(states);
        states.put("app", DONE);
        states.put("after", DONE);
        assertThat(c.update(states)).doesNotContain(POSTSTOP);
        states.put("proxy", DONE);
        assertThat(c.update(states)).containsExactly(PRESTART, MAIN, POSTSTART, POSTSTOP);
        states.put("app", PENDING); // forward only: nothing closes again
        assertThat(c.update(states)).containsExactly(PRESTART, MAIN, POSTSTART, POSTSTOP);
    }

    @Test
    void afterAFailedPrestartPoststopRunsOnceTheUnstartedMainTasksAreKilled() {
        states.put("init", FAILED);
        states.put("proxy", DONE);
        assertThat(c.update(states)).doesNotContain(POSTSTOP);
        states.put("app", DONE);
        states.put("after", DONE);
        assertThat(c.update(states)).contains(POSTSTOP).doesNotContain(MAIN);
    }

    @Test
    void withoutPrestartTasksMainStartsAtOnce() {
        LifecycleCoordinator plain = new LifecycleCoordinator(List.of(app));
        assertThat(plain.update(Map.of())).contains(MAIN);
    }
}
