package dev.drover.taskrunner;

import static dev.drover.api.v1alpha1.TaskEventType.Received;
import static dev.drover.api.v1alpha1.TaskEventType.SetupFailure;
import static dev.drover.api.v1alpha1.TaskEventType.Started;
import static dev.drover.api.v1alpha1.TaskEventType.TaskSetup;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.AllocDir;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's setup ({@code TaskSetup} events) is told with its start, not change by change: a task that starts at once
 * costs two store writes and status builds ({@code Received}, then setup and start together) instead of one per
 * event; a setup that takes long is still told within a quarter of a second, and a failed one at once.
 */
class SetupPublishingTest {

    static final AllocId ALLOC = new AllocId("default", "web");

    @TempDir
    Path dir;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    /** Each change told to the listener: the task's state then, and the events it carried. */
    final List<Told> told = new CopyOnWriteArrayList<>();

    final List<TaskRunner> runners = new ArrayList<>();

    record Told(TaskState state, List<TaskEventType> events) {}

    @AfterEach
    void tearDown() throws Exception {
        for (TaskRunner r : runners) {
            r.kill(null).get(10, TimeUnit.SECONDS);
        }
        mock.close();
        db.close();
    }

    @Test
    void aTaskThatStartsAtOnceIsToldReceivedThenItsSetupWithItsStart() throws Exception {
        TaskRunner r = runner(List.of());
        r.run();
        await().atMost(Duration.ofSeconds(10)).until(() -> r.state().getState() == TaskState.State.Running);

        assertThat(told).extracting(Told::events).containsExactly(List.of(Received), List.of(TaskSetup, Started));
        assertThat(told.getLast().state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(db.getTaskState(ALLOC, "app").orElseThrow())
                .as("what is stored is what was told")
                .isEqualTo(told.getLast().state());
    }

    @Test
    void aSetupThatTakesLongIsToldWithinItsWindowBeforeTheTaskStarts() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TaskPrestartHook slow = new TaskPrestartHook() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public void prestart(TaskHookContext ctx) {
                try {
                    release.await(); // an image pull that takes a while
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        TaskRunner r = runner(List.of(slow));
        long begin = System.nanoTime();
        r.run();
        try {
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> told.stream().anyMatch(t -> t.events().contains(TaskSetup)));
            assertThat(Duration.ofNanos(System.nanoTime() - begin))
                    .as("told no later than its window after it was held (with room for a slow machine)")
                    .isLessThan(PublishPacing.SETUP_WINDOW.plusSeconds(2));
            assertThat(told.getLast().state().getState()).isEqualTo(TaskState.State.Pending);
            assertThat(told).extracting(Told::events).doesNotContain(List.of(Started));
        } finally {
            release.countDown();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> r.state().getState() == TaskState.State.Running);
        assertThat(told.getLast().events()).containsExactly(Started);
    }

    @Test
    void aSetupThatFailsIsToldAtOnceWithItsFailure() throws Exception {
        TaskPrestartHook failing = new TaskPrestartHook() {
            @Override
            public String name() {
                return "failing";
            }

            @Override
            public void prestart(TaskHookContext ctx) throws TaskHookException {
                throw new TaskHookException(SetupFailure, "the volume is not there");
            }
        };
        TaskRunner r = runner(List.of(failing));
        long begin = System.nanoTime();
        r.run();
        r.done().get(10, TimeUnit.SECONDS);

        assertThat(told.stream().flatMap(t -> t.events().stream()))
                .containsSubsequence(Received, TaskSetup, SetupFailure);
        Told failure = told.stream()
                .filter(t -> t.events().contains(SetupFailure))
                .findFirst()
                .orElseThrow();
        assertThat(failure.events())
                .as("the setup held goes out with the failure")
                .contains(TaskSetup);
        assertThat(Duration.ofNanos(System.nanoTime() - begin))
                .as("not kept for the window")
                .isLessThan(PublishPacing.SETUP_WINDOW.plusSeconds(5));
    }

    TaskRunner runner(List<TaskPrestartHook> extra) {
        Task task = new Task();
        task.setName("app");
        task.setDriver("mock");
        task.setConfig(Map.of("runFor", "1h"));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(AllocationType.Service);
        spec.setTasks(List.of(task));
        AllocDir allocDir = AllocDir.of(dir, ALLOC);
        TaskConfig template = new TaskConfig(
                ALLOC.namespace(),
                ALLOC.name(),
                task.getName(),
                Map.of(),
                Map.of(),
                allocDir.shared(),
                allocDir.taskDir(task.getName()),
                allocDir.logs(),
                allocDir.taskSecrets(task.getName()));
        DriverRegistry drivers = new DriverRegistry(List.of(mock));
        TaskRunner r = new TaskRunner(new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), extra),
                List.of(),
                (name, state, events) -> told.add(
                        new Told(state, events.stream().map(TaskEvent::getType).toList())),
                new TaskRunnerConfig.Shared(
                        drivers,
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        TaskRunnerConfig.DEFAULT_MAX_KILL_TIMEOUT,
                        Duration.ofSeconds(10),
                        TaskRunnerConfig.StopRetry.DEFAULT)));
        runners.add(r);
        return r;
    }
}
