package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.AllocDir;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.FailingKvStore;
import dev.drover.state.StateDB;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store that cannot write (a full disk) must not end a task runner while its task runs. */
class TaskRunnerStoreFailureTest {

    static final AllocId ALLOC = new AllocId("default", "web");

    @TempDir
    Path dir;

    final FailingKvStore kv = FailingKvStore.inMemory();
    final StateDB db = kv.stateDB(Duration.ofMillis(20));
    final MockDriver mock = new MockDriver(Clock.systemUTC());

    @AfterEach
    void tearDown() {
        mock.close();
        db.close();
    }

    TaskRunner runner(Task task) {
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
        return new TaskRunner(new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), List.of()),
                List.of(),
                (name, state, taskEvents) -> {},
                new TaskRunnerConfig.Shared(
                        drivers,
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        TaskRunnerConfig.DEFAULT_MAX_KILL_TIMEOUT,
                        Duration.ofSeconds(10),
                        new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(10))))));
    }

    static Task task() {
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of("runFor", "1h"));
        return t;
    }

    @Test
    void aTaskStaysSupervisedWhileTheStoreFailsAndItsStateIsStoredOnceItRecovers() throws Exception {
        kv.failNext(6); // Received, TaskSetup and Started each write two entries

        TaskRunner r = runner(task());
        r.run();

        await().atMost(Duration.ofSeconds(10)).until(() -> r.state().getState() == TaskState.State.Running);
        assertThat(kv.failed()).isEqualTo(6);
        assertThat(r.done()).as("still supervising its task").isNotDone();
        await().atMost(Duration.ofSeconds(10)).until(() -> db.unstored(ALLOC).isEmpty());
        assertThat(db.getTaskState(ALLOC, "main").orElseThrow().getState()).isEqualTo(TaskState.State.Running);
        assertThat(db.getTaskLocalState(ALLOC, "main").orElseThrow().driverHandle())
                .as("a restarted agent can reattach")
                .isNotNull();

        r.kill(null).get(10, TimeUnit.SECONDS);
        assertThat(r.state().getEvents()).extracting(e -> e.getType()).contains(TaskEventType.Killed);
        assertThat(db.getTaskState(ALLOC, "main").orElseThrow().getState()).isEqualTo(TaskState.State.Dead);
    }

    @Test
    void aKillWhileTheStoreFailsStillKillsTheTask() throws Exception {
        TaskRunner r = runner(task());
        r.run();
        await().atMost(Duration.ofSeconds(10)).until(() -> r.state().getState() == TaskState.State.Running);
        kv.fail();

        r.kill(null).get(10, TimeUnit.SECONDS);

        assertThat(r.state().getState()).isEqualTo(TaskState.State.Dead);
        assertThat(db.unstored(ALLOC)).isPresent();
        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> db.unstored(ALLOC).isEmpty());
        assertThat(db.getTaskState(ALLOC, "main").orElseThrow().getState()).isEqualTo(TaskState.State.Dead);
    }
}
