package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import dev.drover.testing.LiveThreads;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task that fails at once with {@code delay: 0s} (issue 37, item 9): what its runner does per restart is bounded,
 * counted here as the work itself (store writes, changes told to the listener, each of which costs its allocation a
 * status build) against the storm's length, never as CPU time.
 */
class RestartStormTest {

    static final AllocId ALLOC = new AllocId("default", "storm");
    static final int RESTARTS = 100;

    @TempDir
    Path dir;

    final StateDB store = StateStores.inMemory();
    final AtomicInteger storeWrites = new AtomicInteger();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    /** What the listener was told: one entry per change told. */
    final List<Told> told = new CopyOnWriteArrayList<>();

    record Told(TaskState state, List<TaskEvent> events) {}

    @AfterEach
    void tearDown() throws Exception {
        mock.close();
        store.close();
    }

    @Test
    void aRestartStormIsStoredAndToldAFewTimesASecondWithEveryEvent() throws Exception {
        TaskRunner r = new TaskRunner(config());
        long start = System.nanoTime();
        r.run();
        r.done().get(60, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;

        TaskState end = r.state();
        assertThat(end.getState()).isEqualTo(TaskState.State.Dead);
        assertThat(end.getFailed()).isTrue();
        assertThat(end.getRestarts()).isEqualTo(RESTARTS);
        assertThat(end.getEvents()).hasSize(TaskState.MAX_EVENTS);
        assertThat(end.getEvents().getLast().getType()).isEqualTo(TaskEventType.NotRestarting);
        assertThat(told.getLast().state())
                .as("the end is told at once, as it is")
                .usingRecursiveComparison()
                .isEqualTo(end);
        List<TaskEventType> events = told.stream()
                .flatMap(t -> t.events().stream())
                .map(TaskEvent::getType)
                .toList();
        assertThat(events)
                .as("every event is told, once")
                .filteredOn(TaskEventType.Restarting::equals)
                .hasSize(RESTARTS);
        assertThat(events).filteredOn(TaskEventType.Started::equals).hasSize(RESTARTS + 1);
        assertThat(events).filteredOn(TaskEventType.Terminated::equals).hasSize(RESTARTS + 1);
        assertThat(events).filteredOn(TaskEventType.NotRestarting::equals).hasSize(1);

        // at most one change per pacing window once restarting, plus the few of the first start and the end, and
        // up to four for each run a loaded machine let last a window or more (its changes are told at once)
        long bound = (long) (seconds / PublishPacing.WINDOW.toMillis() * 1000) + 10 + 4 * slowRuns();
        assertThat(told.size()).as("changes told in %.2f s", seconds).isLessThanOrEqualTo((int) bound);
        assertThat(storeWrites.get())
                .as("task states stored in %.2f s", seconds)
                .isLessThanOrEqualTo((int) bound);
    }

    @Test
    void aTaskFailingAtOnceStartsAtMostAHundredTimesASecond() throws Exception {
        TaskRunner r = new TaskRunner(config());
        long start = System.nanoTime();
        r.run();
        r.done().get(60, TimeUnit.SECONDS);
        long nanos = System.nanoTime() - start;

        assertThat(r.state().getRestarts()).isEqualTo(RESTARTS);
        assertThat(Duration.ofNanos(nanos))
                .as("%d starts, each at least %s after the one before", RESTARTS + 1, RestartStep.MIN_SPACING)
                .isGreaterThanOrEqualTo(RestartStep.MIN_SPACING.multipliedBy(RESTARTS));
    }

    @Test
    void aChangeHeldWhileTheRunnerWaitsForTheRunIsToldWhenDue() throws Exception {
        int quick = 5;
        TaskRunner r = new TaskRunner(config(quickThenLong(quick)));
        String runnerThread = "task-" + ALLOC + "/main";
        try {
            r.run();
            // the long run's start takes longer than a window: its Started goes out at once, with what was held;
            // then the runner waits for the run on no thread of its own (nothing held then, so no publish is due)
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> told.getLast().state().getState() == TaskState.State.Running
                            && told.getLast().state().getRestarts() == quick
                            && LiveThreads.now().stream()
                                    .noneMatch(t -> t.name().equals(runnerThread)));

            // within the run's first window and a window of the last publish: held, no later change to take it out
            r.signal("SIGHUP", "its config changed");

            await().atMost(PublishPacing.WINDOW.plus(Duration.ofSeconds(1)))
                    .untilAsserted(() -> assertThat(told.getLast().events())
                            .extracting(TaskEvent::getType)
                            .as("the held change, told when due though the task runs on")
                            .containsExactly(TaskEventType.Signaling));
            assertThat(told.getLast().state()).usingRecursiveComparison().isEqualTo(r.state());
            List<TaskEventType> events = told.stream()
                    .flatMap(t -> t.events().stream())
                    .map(TaskEvent::getType)
                    .toList();
            assertThat(events).filteredOn(TaskEventType.Restarting::equals).hasSize(quick);
            assertThat(events).filteredOn(TaskEventType.Started::equals).hasSize(quick + 1);
        } finally {
            r.kill(null).get(10, TimeUnit.SECONDS);
        }
    }

    /** Runs that lasted at least a pacing window, from Started to Terminated. */
    long slowRuns() {
        long slow = 0;
        Instant started = null;
        for (Told t : told) {
            for (TaskEvent e : t.events()) {
                Instant at = Timestamps.parse(e.getTime());
                if (e.getType() == TaskEventType.Started) {
                    started = at;
                } else if (e.getType() == TaskEventType.Terminated
                        && started != null
                        && Duration.between(started, at).compareTo(PublishPacing.WINDOW) >= 0) {
                    slow++;
                }
            }
        }
        return slow;
    }

    /**
     * The mock driver, whose task exits 1 at once for its first {@code quick} starts; then it takes longer than a
     * pacing window to start and runs for an hour.
     */
    Driver quickThenLong(int quick) {
        AtomicInteger starts = new AtomicInteger();
        Map<String, Object> slow = Map.of(
                "runFor",
                "1h",
                "startBlockFor",
                PublishPacing.WINDOW.plusMillis(50).toMillis() + "ms");
        return (Driver) Proxy.newProxyInstance(
                Driver.class.getClassLoader(), new Class<?>[] {Driver.class}, (proxy, method, args) -> {
                    if (method.getName().equals("start") && starts.getAndIncrement() >= quick) {
                        TaskConfig c = (TaskConfig) args[0];
                        args[0] = new TaskConfig(
                                c.namespace(),
                                c.allocName(),
                                c.taskName(),
                                slow,
                                c.env(),
                                c.allocDir(),
                                c.taskDir(),
                                c.logsDir(),
                                c.secretsDir(),
                                c.resources(),
                                c.user());
                    }
                    try {
                        return method.invoke(mock, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    TaskRunnerConfig config() {
        return config(mock);
    }

    /** A task that exits 1 at once, restarting without delay until its attempts are spent, on {@code driver}. */
    TaskRunnerConfig config(Driver driver) {
        Task task = new Task();
        task.setName("main");
        task.setDriver("mock");
        task.setConfig(Map.of("runFor", "0s", "exitCode", 1));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(AllocationType.Service);
        spec.setRestartPolicy(new RestartPolicy(RESTARTS, "1h", "0s", RestartMode.Fail));
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
        DriverRegistry drivers = new DriverRegistry(List.of(driver));
        return new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), List.of()),
                List.of(),
                (name, state, events) -> told.add(new Told(state, events)),
                new TaskRunnerConfig.Shared(
                        drivers,
                        countingTaskStates(),
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        TaskRunnerConfig.DEFAULT_MAX_KILL_TIMEOUT,
                        Duration.ofSeconds(10),
                        new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(10)))));
    }

    /** {@link #store}, counting the task states written to it. */
    StateDB countingTaskStates() {
        return (StateDB) Proxy.newProxyInstance(
                StateDB.class.getClassLoader(), new Class<?>[] {StateDB.class}, (proxy, method, args) -> {
                    if (method.getName().equals("putTaskState")) {
                        storeWrites.incrementAndGet();
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
