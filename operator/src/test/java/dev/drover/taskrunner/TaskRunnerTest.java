package dev.drover.taskrunner;

import static dev.drover.api.v1alpha1.TaskEventType.DriverFailure;
import static dev.drover.api.v1alpha1.TaskEventType.FailedValidation;
import static dev.drover.api.v1alpha1.TaskEventType.Killed;
import static dev.drover.api.v1alpha1.TaskEventType.Killing;
import static dev.drover.api.v1alpha1.TaskEventType.LeaderTaskDead;
import static dev.drover.api.v1alpha1.TaskEventType.NotRestarting;
import static dev.drover.api.v1alpha1.TaskEventType.Received;
import static dev.drover.api.v1alpha1.TaskEventType.RestartSignaled;
import static dev.drover.api.v1alpha1.TaskEventType.Restarting;
import static dev.drover.api.v1alpha1.TaskEventType.Signaling;
import static dev.drover.api.v1alpha1.TaskEventType.Started;
import static dev.drover.api.v1alpha1.TaskEventType.TaskSetup;
import static dev.drover.api.v1alpha1.TaskEventType.Terminated;
import static dev.drover.api.v1alpha1.TaskEventType.WaitingShutdownDelay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.allocrunner.AllocDir;
import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.state.TaskLocalState;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import dev.drover.testing.ForwardingDriver;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TaskRunnerTest {

    static final AllocId ALLOC = new AllocId("default", "web");

    @TempDir
    Path dir;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final List<TaskEvent> events = new CopyOnWriteArrayList<>();
    final List<TaskRunner> runners = new ArrayList<>();
    Duration maxKillTimeout = TaskRunnerConfig.DEFAULT_MAX_KILL_TIMEOUT;

    @AfterEach
    void tearDown() throws Exception {
        for (TaskRunner r : runners) {
            r.kill(null).get(10, TimeUnit.SECONDS);
        }
        mock.close();
        db.close();
    }

    static Task task(String name, Map<String, Object> config) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        t.setConfig(config);
        return t;
    }

    static AllocationSpec spec(AllocationType type, RestartPolicy policy, Task task) {
        AllocationSpec s = new AllocationSpec();
        s.setNodeName("local");
        s.setType(type);
        s.setRestartPolicy(policy);
        s.setTasks(List.of(task));
        return s;
    }

    TaskRunnerConfig config(AllocationSpec spec, Driver driver, Duration driverDeadline) {
        Task task = spec.getTasks().getFirst();
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
        DriverRegistry drivers = new DriverRegistry(List.of(driver));
        return new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), List.of()),
                List.of(),
                (name, state, taskEvents) -> events.addAll(taskEvents),
                new TaskRunnerConfig.Shared(
                        drivers,
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        maxKillTimeout,
                        driverDeadline,
                        new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(10)))));
    }

    TaskRunner runner(AllocationSpec spec) {
        TaskRunner r = new TaskRunner(config(spec, mock, Duration.ofSeconds(10)));
        runners.add(r);
        return r;
    }

    List<TaskEventType> types() {
        return events.stream().map(TaskEvent::getType).toList();
    }

    static void await(TaskRunner r) throws Exception {
        r.done().get(20, TimeUnit.SECONDS);
    }

    @Test
    void batchTaskThatSucceedsRunsOnce() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Batch, null, task("job", Map.of("runFor", "50ms"))));
        r.run();
        await(r);
        assertThat(types()).containsExactly(Received, TaskSetup, Started, Terminated);
        TaskState s = r.state();
        assertThat(s.getState()).isEqualTo(TaskState.State.Dead);
        assertThat(s.getFailed()).isFalse();
        assertThat(s.getRestarts()).isZero();
        assertThat(events.get(3).getExitCode()).isZero();
        assertThat(Timestamps.parse(s.getFinishedAt())).isAfterOrEqualTo(Timestamps.parse(s.getStartedAt()));
    }

    @Test
    void aSignalIsRecordedThenReachesTheRunningTask() throws Exception {
        RestartPolicy noRestarts = new RestartPolicy(0, "10s", "1s", RestartMode.Fail);
        TaskRunner r = runner(spec(AllocationType.Batch, noRestarts, task("web", Map.of("exitOnSignal", "SIGHUP"))));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        r.signal("hup", "Template re-rendered");
        await(r);
        assertThat(types()).containsSubsequence(Started, Signaling, Terminated);
        TaskEvent signaling = events.get(types().indexOf(Signaling));
        assertThat(signaling.getSignal()).isEqualTo("SIGHUP");
        assertThat(signaling.getMessage()).isEqualTo("Template re-rendered");
        assertThat(events.get(types().indexOf(Terminated)).getSignal())
                .as("the mock task exits as SIGHUP ends a process")
                .isEqualTo("SIGHUP");
    }

    @Test
    void aRunningViewOfAnEarlierRunRunsNoCommandInALaterOne() throws Exception {
        List<RunningTask> views = new CopyOnWriteArrayList<>();
        TaskRunningHook hook = new TaskRunningHook() {
            @Override
            public void running(RunningTask task) {
                views.add(task);
            }

            @Override
            public void stopped() {}
        };
        TaskRunnerConfig c = config(
                spec(
                        AllocationType.Service,
                        null,
                        task("web", Map.of("exec", Map.of("check", Map.of("stdout", "ok\n"))))),
                mock,
                Duration.ofSeconds(10));
        TaskRunner r = new TaskRunner(new TaskRunnerConfig(
                c.allocId(),
                c.spec(),
                c.task(),
                c.template(),
                c.prestartHooks(),
                List.of(hook),
                c.listener(),
                c.shared()));
        runners.add(r);
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> views.size() == 1);
        r.restart("spec changed");
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> views.size() == 2 && r.state().getState() == TaskState.State.Running);
        ExecRequest check = new ExecRequest(List.of("check"), false, false);

        assertThatThrownBy(() -> views.getFirst().exec(check)).isInstanceOf(TaskNotRunningException.class);
        try (ExecProcess now = views.getLast().exec(check)) {
            assertThat(new String(now.stdout().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo("ok\n");
        }
    }

    @Test
    void aSignalThatFailsIsADriverFailureAndTheTaskRunsOn() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of("signalError", "no such pid"))));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        assertThatThrownBy(() -> r.signal("SIGHUP", "Template re-rendered"))
                .isInstanceOf(DriverException.class)
                .hasMessage("no such pid");
        assertThat(types()).endsWith(Signaling, DriverFailure);
        assertThat(events.getLast().getDriverError()).isEqualTo("no such pid");
        assertThat(events.getLast().getMessage()).isEqualTo("Sending SIGHUP failed: no such pid");
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(r.done()).isNotDone();
    }

    @Test
    void aTaskThatIsNotRunningIsNotSignalled() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Batch, null, task("job", Map.of("runFor", "0s"))));
        assertThatThrownBy(() -> r.signal("SIGHUP", "too early"))
                .isInstanceOf(TaskNotRunningException.class)
                .hasMessage("task job is not running (Pending)");
        r.run();
        await(r);
        assertThatThrownBy(() -> r.signal("SIGHUP", "too late"))
                .isInstanceOf(TaskNotRunningException.class)
                .hasMessage("task job is not running (Dead)");
        assertThat(types()).doesNotContain(Signaling, DriverFailure);
    }

    @Test
    void aDriverWhoseSignalHangsCannotHoldTheCaller() throws Exception {
        CountDownLatch released = new CountDownLatch(1);
        Driver hanging = new ForwardingDriver(mock) {
            @Override
            public void signal(TaskHandle handle, String signal) {
                try {
                    released.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        TaskRunner r = new TaskRunner(
                config(spec(AllocationType.Service, null, task("web", Map.of())), hanging, Duration.ofMillis(200)));
        runners.add(r);
        try {
            r.run();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
            assertThatThrownBy(() -> r.signal("SIGHUP", "Template re-rendered"))
                    .isInstanceOf(DriverException.class)
                    .hasMessage("sending SIGHUP to web did not finish within 200ms");
            assertThat(events.getLast().getType()).isEqualTo(DriverFailure);
            assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        } finally {
            released.countDown();
        }
    }

    @Test
    void statsAreTheDriversReadingWhileTheTaskRunsAndNothingOnceItIsDead() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of("runFor", "1h"))));
        assertThat(r.stats()).as("not started yet").isEmpty();
        r.run();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> r.stats().isPresent());
        assertThat(r.stats().orElseThrow().memoryBytes())
                .as("the mock driver's pretend 4 MiB")
                .isEqualTo(4L << 20);
        r.kill(null).get(10, TimeUnit.SECONDS);
        assertThat(r.stats()).isEmpty();
    }

    @Test
    void failingTaskIsRestartedPerPolicyThenNotRestarting() throws Exception {
        RestartPolicy policy = new RestartPolicy(2, "10s", "50ms", RestartMode.Fail);
        TaskRunner r =
                runner(spec(AllocationType.Service, policy, task("web", Map.of("runFor", "20ms", "exitCode", 1))));
        r.run();
        await(r);
        assertThat(types())
                .containsExactly(
                        Received,
                        TaskSetup,
                        Started,
                        Terminated,
                        Restarting,
                        Started,
                        Terminated,
                        Restarting,
                        Started,
                        Terminated,
                        NotRestarting);
        TaskState s = r.state();
        assertThat(s.getFailed()).isTrue();
        assertThat(s.getRestarts()).isEqualTo(2);
        assertThat(s.getEvents())
                .as("the newest 10")
                .hasSize(10)
                .first()
                .extracting(TaskEvent::getType)
                .isEqualTo(TaskSetup);
        assertThat(events.getLast().getRestartReason())
                .isEqualTo("Exceeded allowed attempts 2 in interval 10s and mode is \"Fail\"");
        assertThat(events.get(3).getExitCode()).isEqualTo(1);
    }

    @Test
    void restartWaitsAtLeastItsDelay() throws Exception {
        RestartPolicy policy = new RestartPolicy(1, "10s", "300ms", RestartMode.Fail);
        TaskRunner r =
                runner(spec(AllocationType.Service, policy, task("web", Map.of("runFor", "10ms", "exitCode", 1))));
        r.run();
        await(r);
        TaskEvent restarting = events.stream()
                .filter(e -> e.getType() == Restarting)
                .findFirst()
                .orElseThrow();
        TaskEvent nextStart = events.stream()
                .filter(e -> e.getType() == Started)
                .skip(1)
                .findFirst()
                .orElseThrow();
        Duration waited =
                Duration.between(Timestamps.parse(restarting.getTime()), Timestamps.parse(nextStart.getTime()));
        assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(dev.drover.common.Durations.parse(restarting.getStartDelay()))
                .isBetween(Duration.ofMillis(300), Duration.ofMillis(375));
    }

    @Test
    void delayModeWaitsOutTheWindowAndAKillEndsTheWait() throws Exception {
        RestartPolicy policy = new RestartPolicy(1, "30s", "10ms", RestartMode.Delay);
        TaskRunner r =
                runner(spec(AllocationType.Service, policy, task("web", Map.of("runFor", "10ms", "exitCode", 1))));
        r.run();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() ->
                        events.stream().filter(e -> e.getType() == Restarting).count() == 2);
        TaskEvent second = events.stream()
                .filter(e -> e.getType() == Restarting)
                .skip(1)
                .findFirst()
                .orElseThrow();
        assertThat(second.getRestartReason()).isEqualTo("Exceeded allowed attempts, applying a delay");
        assertThat(dev.drover.common.Durations.parse(second.getStartDelay())).isGreaterThan(Duration.ofSeconds(25));
        long start = System.nanoTime();
        r.kill(null).get(5, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        assertThat(r.state().getFailed()).isFalse();
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Dead);
    }

    @Test
    void unrecoverableStartErrorFailsWithoutRetrying() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of("startError", "image not found"))));
        r.run();
        await(r);
        assertThat(types()).containsExactly(Received, TaskSetup, DriverFailure, NotRestarting);
        assertThat(events.get(2).getDriverError()).isEqualTo("image not found");
        assertThat(events.get(3).getRestartReason()).isEqualTo("Error was unrecoverable");
        assertThat(r.state().getFailed()).isTrue();
    }

    @Test
    void killWaitsTheShutdownDelayThenKills() throws Exception {
        Task t = task("web", Map.of());
        t.setShutdownDelay("200ms");
        t.setKillTimeout("2s");
        TaskRunner r = runner(spec(AllocationType.Service, null, t));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        TaskEvent cause = TaskEvent.of(LeaderTaskDead, Instant.now()).withMessage("Leader Task in Group dead");
        r.kill(cause).get(10, TimeUnit.SECONDS);
        assertThat(types())
                .containsExactly(Received, TaskSetup, Started, LeaderTaskDead, WaitingShutdownDelay, Killing, Killed);
        Instant waiting = Timestamps.parse(events.get(4).getTime());
        Instant killing = Timestamps.parse(events.get(5).getTime());
        assertThat(Duration.between(waiting, killing)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(events.get(5).getKillTimeout()).isEqualTo("2s");
        assertThat(r.state().getFailed()).isFalse();
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Dead);
    }

    @Test
    void requestedRestartKillsAndStartsAgainAtOnce() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of())));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        r.restart("spec changed");
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> types().stream().filter(t -> t == Started).count() == 2);
        assertThat(types())
                .containsExactly(
                        Received,
                        TaskSetup,
                        Started,
                        TaskEventType.RestartSignaled,
                        Killing,
                        Killed,
                        Restarting,
                        Started);
        assertThat(events.get(3).getRestartReason()).isEqualTo("spec changed");
        assertThat(events.get(6).getRestartReason()).isEqualTo("Restart requested");
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(r.state().getFailed()).isFalse();
    }

    /** The mock driver, except that its first {@code failures} stops fail. */
    static Driver failingStops(MockDriver mock, int failures) {
        int[] left = {failures};
        return new Driver() {
            public String name() {
                return mock.name();
            }

            public List<String> validate(Map<String, Object> config) {
                return mock.validate(config);
            }

            public TaskHandle start(TaskConfig task) throws DriverStartException {
                return mock.start(task);
            }

            public CompletableFuture<ExitResult> exit(TaskHandle handle) {
                return mock.exit(handle);
            }

            public void stop(TaskHandle handle, Duration timeout, String signal)
                    throws dev.drover.driver.DriverException {
                if (left[0]-- > 0) {
                    throw new dev.drover.driver.DriverException("device busy");
                }
                mock.stop(handle, timeout, signal);
            }

            public void signal(TaskHandle handle, String signal) throws dev.drover.driver.DriverException {
                mock.signal(handle, signal);
            }

            public void destroy(TaskHandle handle) {
                mock.destroy(handle);
            }

            public TaskHandle recover(TaskHandle handle) {
                return mock.recover(handle);
            }

            public TaskStats stats(TaskHandle handle) throws dev.drover.driver.DriverException {
                return mock.stats(handle);
            }

            public void close() {}
        };
    }

    @Test
    void aFailedStopIsRetriedWithBackoff() throws Exception {
        TaskRunner r = new TaskRunner(config(
                spec(AllocationType.Service, null, task("web", Map.of())),
                failingStops(mock, 1),
                Duration.ofSeconds(5)));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        r.kill(null).get(10, TimeUnit.SECONDS);
        assertThat(events.getLast().getType()).isEqualTo(Killed);
        assertThat(events.getLast().getKillError()).isNull();
    }

    @Test
    void aStopThatKeepsFailingIsReportedAndTriedUntilTheTaskIsDead() throws Exception {
        TaskRunner r = new TaskRunner(config(
                spec(AllocationType.Service, null, task("web", Map.of())),
                failingStops(mock, 4),
                Duration.ofSeconds(5)));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        r.kill(null).get(10, TimeUnit.SECONDS);
        assertThat(types()).containsSubsequence(Killing, DriverFailure, Killed).containsOnlyOnce(DriverFailure);
        TaskEvent reported = events.stream()
                .filter(e -> e.getType() == DriverFailure)
                .findFirst()
                .orElseThrow();
        assertThat(reported.getKillError()).isEqualTo("device busy");
        assertThat(reported.getMessage()).contains("Task could not be killed: device busy", "trying again every 10ms");
        assertThat(events.getLast().getKillError()).isNull();
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Dead);
    }

    @Test
    void aTaskWhoseKillKeepsFailingIsNeverGivenUpForDead() throws Exception {
        TaskRunner r = new TaskRunner(config(
                spec(AllocationType.Service, null, task("web", Map.of())),
                failingStops(mock, Integer.MAX_VALUE),
                Duration.ofSeconds(5)));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        CompletableFuture<Void> killed = r.kill(null);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(DriverFailure));
        assertThat(killed).as("its process may be alive").isNotDone();
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(types()).doesNotContain(Killed);
        r.shutdown(); // the agent stops: the runner ends, the task keeps its record for the next agent
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(db.getTaskLocalState(ALLOC, "web").orElseThrow().driverHandle())
                .isNotNull();
        mock.destroy(mock.recover(new TaskHandle("mock", "default/web/web", Instant.now(), Map.of())));
    }

    @Test
    void aHugeShutdownDelayIsCappedByTheAgentsMaximumKillTimeout() throws Exception {
        maxKillTimeout = Duration.ofMillis(300);
        Task t = task("web", Map.of());
        t.setShutdownDelay("8760h");
        TaskRunner r = runner(spec(AllocationType.Service, null, t));
        r.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        r.kill(null).get(5, TimeUnit.SECONDS);
        assertThat(events.stream()
                        .filter(e -> e.getType() == WaitingShutdownDelay)
                        .findFirst()
                        .orElseThrow()
                        .getMessage())
                .isEqualTo("Waiting for shutdown delay of 300ms");
        assertThat(types()).containsSubsequence(WaitingShutdownDelay, Killing, Killed);
    }

    @Test
    void twoQuickUpdatesOfARestoredTaskRestartItOnceWithTheNewestDefinition() throws Exception {
        AllocationSpec spec = spec(AllocationType.Service, null, task("web", Map.of("killAfter", "300ms")));
        TaskRunner first = new TaskRunner(config(spec, mock, Duration.ofSeconds(10)));
        first.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        first.shutdown(); // the agent stops; the task keeps running
        TaskState stored = db.getTaskState(ALLOC, "web").orElseThrow();
        TaskLocalState local = db.getTaskLocalState(ALLOC, "web").orElseThrow();
        events.clear();
        TaskRunner restored = TaskRunner.restore(config(spec, mock, Duration.ofSeconds(10)), stored, local);
        runners.add(restored);
        restored.run();

        Task second = task("web", Map.of("killAfter", "300ms", "stdoutString", "v2"));
        Task third = task("web", Map.of("killAfter", "300ms", "stdoutString", "v3"));
        restored.update(second, spec(AllocationType.Service, null, second), "Task definition changed (generation 2)");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Killing));
        // the second arrives while the first one's restart is killing the task: both collapse into one restart
        restored.update(third, spec(AllocationType.Service, null, third), "Task definition changed (generation 3)");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        restored.shutdown(); // whatever the runner would do next with the started task is in the events now
        assertThat(types()).containsExactly(RestartSignaled, Killing, Killed, Restarting, Started);
        assertThat(restored.task()).isEqualTo(third);
    }

    @Test
    void invalidDriverConfigFailsValidationNamingTheKey() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of("runFor", "soon"))));
        r.run();
        await(r);
        assertThat(types()).containsExactly(Received, FailedValidation);
        assertThat(events.get(1).getValidationError()).startsWith("config.runFor: \"soon\" is not a duration");
        assertThat(r.state().getFailed()).isTrue();
    }

    @Test
    void rawExecDisabledFailsValidationSayingHowToEnableIt() throws Exception {
        Task t = task("web", Map.of("command", "/bin/true"));
        t.setDriver("raw_exec");
        TaskRunner r = runner(spec(AllocationType.Service, null, t));
        r.run();
        await(r);
        assertThat(events.get(1).getValidationError()).contains("start the agent with --enable-raw-exec");
    }

    @Test
    void everyTransitionIsPersisted() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Batch, null, task("job", Map.of("runFor", "10ms"))));
        r.run();
        await(r);
        TaskState stored = db.getTaskState(ALLOC, "job").orElseThrow();
        assertThat(stored).isEqualTo(r.state());
        assertThat(db.getTaskLocalState(ALLOC, "job").orElseThrow().hookDone("taskdir"))
                .isTrue();
    }

    @Test
    void restoredRunnerReattachesWithoutANewStart() throws Exception {
        AllocationSpec spec = spec(AllocationType.Service, null, task("web", Map.of("runFor", "1h")));
        TaskRunner first = new TaskRunner(config(spec, mock, Duration.ofSeconds(10)));
        first.run();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> types().contains(Started));
        first.shutdown(); // the agent stops; the task keeps running
        assertThat(first.done()).isDone();

        TaskState stored = db.getTaskState(ALLOC, "web").orElseThrow();
        TaskLocalState local = db.getTaskLocalState(ALLOC, "web").orElseThrow();
        events.clear();
        TaskRunner restored = TaskRunner.restore(config(spec, mock, Duration.ofSeconds(10)), stored, local);
        runners.add(restored);
        restored.run();
        assertThat(restored.state().getState()).isEqualTo(TaskState.State.Running);
        restored.kill(null).get(10, TimeUnit.SECONDS);
        assertThat(types()).containsExactly(Killing, Killed);
        assertThat(restored.state().getRestarts()).isZero();
    }

    @Test
    void aCompletedBatchTaskIsNotRunAgainAfterRestore() throws Exception {
        AllocationSpec spec = spec(AllocationType.Batch, null, task("job", Map.of("runFor", "10ms")));
        TaskRunner first = new TaskRunner(config(spec, mock, Duration.ofSeconds(10)));
        first.run();
        await(first);
        TaskState stored = db.getTaskState(ALLOC, "job").orElseThrow();
        events.clear();
        TaskRunner restored = TaskRunner.restore(
                config(spec, mock, Duration.ofSeconds(10)),
                stored,
                db.getTaskLocalState(ALLOC, "job").orElseThrow());
        restored.run();
        restored.done().get(1, TimeUnit.SECONDS);
        assertThat(events).isEmpty();
        assertThat(restored.state()).isEqualTo(stored);
    }

    @Test
    void killOfARunnerNeverRunReturnsAtOnce() throws Exception {
        TaskRunner r = runner(spec(AllocationType.Service, null, task("web", Map.of())));
        r.kill(null).get(1, TimeUnit.SECONDS);
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Dead);
        assertThat(types()).containsExactly(Received);
    }

    @Test
    void aDriverThatNeverStartsCannotHangTheRunner() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        Driver hanging = new Driver() {
            @Override
            public String name() {
                return "mock";
            }

            @Override
            public List<String> validate(Map<String, Object> config) {
                return List.of();
            }

            @Override
            public TaskHandle start(TaskConfig task) {
                while (true) {
                    try {
                        never.await();
                    } catch (InterruptedException ignored) {
                        // a driver that ignores interruption
                    }
                }
            }

            @Override
            public CompletableFuture<ExitResult> exit(TaskHandle handle) {
                return new CompletableFuture<>();
            }

            @Override
            public void stop(TaskHandle handle, Duration timeout, String signal) {}

            @Override
            public void signal(TaskHandle handle, String signal) {}

            @Override
            public void destroy(TaskHandle handle) {}

            @Override
            public TaskHandle recover(TaskHandle handle) {
                return handle;
            }

            @Override
            public TaskStats stats(TaskHandle handle) {
                return null;
            }

            @Override
            public void close() {}
        };
        RestartPolicy noRestarts = new RestartPolicy(0, "10s", "1s", RestartMode.Fail);
        TaskRunner r = new TaskRunner(config(
                spec(AllocationType.Service, noRestarts, task("web", Map.of())), hanging, Duration.ofMillis(200)));
        r.run();
        r.done().get(5, TimeUnit.SECONDS);
        assertThat(types()).containsExactly(Received, TaskSetup, DriverFailure, NotRestarting);
        assertThat(events.get(2).getDriverError()).isEqualTo("starting web did not finish within 200ms");
    }

    @Test
    void aDriverThatPanicsOnStartIsReportedAndThePolicyDecides() throws Exception {
        Driver panicking = new ForwardingDriver(mock) { // the mock driver with a bug
                    @Override
                    public TaskHandle start(TaskConfig task) {
                        throw new IllegalStateException("assignment to entry in nil map");
                    }
                };
        RestartPolicy once = new RestartPolicy(1, "10s", "10ms", RestartMode.Fail);
        TaskRunner r = new TaskRunner(
                config(spec(AllocationType.Service, once, task("web", Map.of())), panicking, Duration.ofSeconds(5)));
        r.run();
        r.done().get(5, TimeUnit.SECONDS);
        assertThat(types())
                .containsExactly(Received, TaskSetup, DriverFailure, Restarting, DriverFailure, NotRestarting);
        assertThat(events.get(2).getDriverError())
                .isEqualTo("driver failed: java.lang.IllegalStateException: assignment to entry in nil map");
        assertThat(r.state().getFailed()).isTrue();
    }

    @Test
    void aDriverThatPanicsWhileTheTaskRunsIsReportedAsLostTrack() throws Exception {
        Driver panicking = new ForwardingDriver(mock) { // the mock driver with a bug
                    @Override
                    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
                        return delegate.exit(handle).thenApply(x -> {
                            throw new IllegalStateException("index out of range");
                        });
                    }
                };
        RestartPolicy never = new RestartPolicy(0, "10s", "10ms", RestartMode.Fail);
        TaskRunner r = new TaskRunner(config(
                spec(AllocationType.Service, never, task("web", Map.of("runFor", "20ms"))),
                panicking,
                Duration.ofSeconds(5)));
        r.run();
        r.done().get(5, TimeUnit.SECONDS);
        assertThat(types()).containsExactly(Received, TaskSetup, Started, Terminated, NotRestarting);
        assertThat(events.get(3).getMessage())
                .contains("lost track of the task")
                .contains("index out of range");
    }
}
