package dev.drover.taskrunner;

import static dev.drover.api.v1alpha1.TaskEventType.NotRestarting;
import static dev.drover.api.v1alpha1.TaskEventType.Received;
import static dev.drover.api.v1alpha1.TaskEventType.Started;
import static dev.drover.api.v1alpha1.TaskEventType.TaskSetup;
import static dev.drover.api.v1alpha1.TaskEventType.Terminated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.AllocDir;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A raw_exec task outlives its runner and driver; a runner rebuilt from the store takes it over. */
class RawExecRestoreTest {

    static final AllocId ALLOC = new AllocId("default", "svc");

    @TempDir
    Path dir;

    final List<TaskEvent> events = new CopyOnWriteArrayList<>();

    TaskRunnerConfig config(StateDB db, DriverRegistry drivers, AllocationSpec spec) {
        Task task = spec.getTasks().getFirst();
        AllocDir allocDir = AllocDir.of(dir, ALLOC);
        TaskConfig template = new TaskConfig(
                "default",
                "svc",
                task.getName(),
                Map.of(),
                Map.of(),
                allocDir.shared(),
                allocDir.taskDir(task.getName()),
                allocDir.logs(),
                allocDir.taskSecrets(task.getName()));
        return new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), List.of()),
                List.of(),
                (n, s, e) -> events.addAll(e),
                new TaskRunnerConfig.Shared(
                        drivers,
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(10),
                        TaskRunnerConfig.StopRetry.DEFAULT));
    }

    @Test
    void restoredRunnerKeepsTheSameProcessAndLearnsItsExitCode() throws Exception {
        Path release = dir.resolve("release");
        Task t = new Task();
        t.setName("worker");
        t.setDriver("raw_exec");
        t.setConfig(Map.of(
                "command",
                "/bin/sh",
                "args",
                List.of("-c", "while [ ! -e " + release + " ]; do sleep 0.05; done; exit 4")));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(AllocationType.Batch);
        spec.setRestartPolicy(new RestartPolicy(0, "10s", "1s", RestartMode.Fail));
        spec.setTasks(List.of(t));

        StateDB db = StateStores.open(dir.resolve("data"));
        LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
        RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator);
        TaskRunner first = new TaskRunner(config(db, new DriverRegistry(List.of(driver)), spec));
        first.run();
        await().atMost(Duration.ofSeconds(10)).until(() -> events.stream().anyMatch(e -> e.getType() == Started));
        long pid = Long.parseLong(db.getTaskLocalState(ALLOC, "worker")
                .orElseThrow()
                .driverHandle()
                .get("pid"));

        // The agent goes away: runner, driver and store are discarded; the process is not.
        first.shutdown();
        driver.close();
        rotator.close();
        db.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

        events.clear();
        try (StateDB reopened = StateStores.open(dir.resolve("data"));
                LogRotator rotator2 = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver2 = new RawExecDriver(Clock.systemUTC(), rotator2)) {
            TaskState stored = reopened.getTaskState(ALLOC, "worker").orElseThrow();
            TaskRunner restored = TaskRunner.restore(
                    config(reopened, new DriverRegistry(List.of(driver2)), spec),
                    stored,
                    reopened.getTaskLocalState(ALLOC, "worker").orElseThrow());
            restored.run();
            assertThat(restored.state().getState()).isEqualTo(TaskState.State.Running);
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

            Files.writeString(release, "");
            restored.done().get(10, TimeUnit.SECONDS);
            List<TaskEventType> types = events.stream().map(TaskEvent::getType).toList();
            assertThat(types).containsExactly(Terminated, NotRestarting).doesNotContain(Started, Received, TaskSetup);
            assertThat(events.getFirst().getExitCode()).isEqualTo(4);
            assertThat(restored.state().getRestarts()).isZero();
        }
    }

    /**
     * The task's supervisor died while the task ran, then the agent restarted. The restored runner takes the task
     * over by its stored PID and start time, and the kill of a delete reaches it: one copy, never two (the runner
     * reported FailedRestoringTask, started a second copy and killed only that one).
     */
    @Test
    void aTaskWhoseSupervisorDiedRunsOnceAcrossARestoreAndIsKilledOnDelete() throws Exception {
        Path starts = dir.resolve("starts");
        Task t = new Task();
        t.setName("worker");
        t.setDriver("raw_exec");
        t.setConfig(
                Map.of("command", "/bin/sh", "args", List.of("-c", "echo started >> " + starts + "; exec sleep 60")));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setTasks(List.of(t));

        StateDB db = StateStores.open(dir.resolve("data"));
        LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
        RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator);
        TaskRunner first = new TaskRunner(config(db, new DriverRegistry(List.of(driver)), spec));
        first.run();
        await().atMost(Duration.ofSeconds(10)).until(() -> events.stream().anyMatch(e -> e.getType() == Started));
        Map<String, String> handle =
                db.getTaskLocalState(ALLOC, "worker").orElseThrow().driverHandle();
        long pid = Long.parseLong(handle.get("pid"));
        ProcessHandle supervisor =
                ProcessHandle.of(Long.parseLong(handle.get("supervisorPid"))).orElseThrow();
        first.shutdown();
        driver.close();
        rotator.close();
        db.close();
        supervisor.destroyForcibly();
        supervisor.onExit().get(10, TimeUnit.SECONDS);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

        events.clear();
        try (StateDB reopened = StateStores.open(dir.resolve("data"));
                LogRotator rotator2 = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver2 = new RawExecDriver(Clock.systemUTC(), rotator2)) {
            TaskState stored = reopened.getTaskState(ALLOC, "worker").orElseThrow();
            TaskRunner restored = TaskRunner.restore(
                    config(reopened, new DriverRegistry(List.of(driver2)), spec),
                    stored,
                    reopened.getTaskLocalState(ALLOC, "worker").orElseThrow());
            restored.run();
            assertThat(restored.state().getState()).isEqualTo(TaskState.State.Running);
            assertThat(events)
                    .extracting(TaskEvent::getType)
                    .doesNotContain(TaskEventType.FailedRestoringTask, Started);
            assertThat(reopened.getTaskLocalState(ALLOC, "worker")
                            .orElseThrow()
                            .driverHandle()
                            .get("pid"))
                    .isEqualTo(Long.toString(pid));

            restored.kill(null).get(20, TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
        assertThat(Files.readAllLines(starts)).containsExactly("started");
    }

    /**
     * An agent started the task and was SIGKILLed before it stored the handle; the allocation was deleted before
     * the next agent ran it. That agent's kill must still reach the process (it was left running: FaultsIT).
     */
    @Test
    void killOfARestoredRunnerReachesAProcessStartedButNeverRecorded() throws Exception {
        Task t = new Task();
        t.setName("worker");
        t.setDriver("raw_exec");
        t.setConfig(Map.of("command", "/bin/sh", "args", List.of("-c", "exec sleep 60")));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setTasks(List.of(t));
        AllocDir allocDir = AllocDir.of(dir, ALLOC);
        Files.createDirectories(allocDir.taskDir("worker"));
        long pid;
        try (LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver killedAgent = new RawExecDriver(Clock.systemUTC(), rotator)) {
            pid = killedAgent
                    .start(new TaskConfig(
                            "default",
                            "svc",
                            "worker",
                            t.getConfig(),
                            Map.of(),
                            allocDir.shared(),
                            allocDir.taskDir("worker"),
                            allocDir.logs(),
                            allocDir.taskSecrets("worker")))
                    .longState("pid", -1);
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

        try (StateDB db = StateStores.open(dir.resolve("data"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver nextAgent = new RawExecDriver(Clock.systemUTC(), rotator)) {
            TaskState pending = new TaskState();
            pending.setState(TaskState.State.Pending);
            TaskRunner restored = TaskRunner.restore(
                    config(db, new DriverRegistry(List.of(nextAgent)), spec),
                    pending,
                    dev.drover.state.TaskLocalState.initial("raw_exec"));
            if (runFirst) {
                restored.run(); // confirmed by the API server, then deleted before its first step
            }
            restored.kill(null).get(20, TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
    }

    /** The same, with the runner already running when the kill comes (FaultsIT again, with 200 and 10 kills). */
    @Test
    void killOfARunningRestoredRunnerReachesAProcessStartedButNeverRecorded() throws Exception {
        runFirst = true;
        killOfARestoredRunnerReachesAProcessStartedButNeverRecorded();
    }

    boolean runFirst;
}
