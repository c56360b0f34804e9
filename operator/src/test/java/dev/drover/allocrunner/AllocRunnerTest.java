package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.testing.StubbornDriver;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AllocRunnerTest {

    record Seen(String task, TaskEvent event) {}

    @TempDir
    Path data;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final List<AllocRunner> runners = new ArrayList<>();
    final List<AllocHooks.Hook> extraHooks = new ArrayList<>();
    final List<String> hookFailures = new CopyOnWriteArrayList<>();
    Driver driver = mock;
    Duration maxKillTimeout = Duration.ofSeconds(30);
    Duration driverDeadline = Duration.ofSeconds(10);
    TaskRunnerConfig.StopRetry stopRetry = new TaskRunnerConfig.StopRetry(List.of());

    @AfterEach
    void tearDown() throws Exception {
        for (AllocRunner r : runners) {
            r.destroy();
        }
        mock.close();
        db.close();
    }

    AllocRunner runner(AllocationType type, Task... tasks) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web")
                .withNamespace("default")
                .withGeneration(1L)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(type);
        spec.setRestartPolicy(new RestartPolicy(0, "10s", "1s", RestartMode.Fail));
        spec.setTasks(List.of(tasks));
        a.setSpec(spec);
        AllocStateListener listener = new AllocStateListener() {
            @Override
            public void allocStateChanged(AllocId id, AllocState state, String task, List<TaskEvent> events) {
                events.forEach(event -> seen.add(new Seen(task, event)));
            }

            @Override
            public void hookFailed(AllocId id, String hook, String phase, RuntimeException failure) {
                hookFailures.add(phase + ": " + failure.getMessage());
            }
        };
        AllocRunnerConfig cfg = new AllocRunnerConfig(
                data,
                new TaskRunnerConfig.Shared(
                        new DriverRegistry(List.of(driver)),
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        maxKillTimeout,
                        driverDeadline,
                        stopRetry),
                List.of(),
                List.copyOf(extraHooks));
        AllocRunner r = new AllocRunner(cfg, a, listener, dev.drover.allocwatcher.PreviousAllocations.NONE);
        runners.add(r);
        return r;
    }

    static Task task(String name, Map<String, Object> config) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        t.setConfig(config);
        return t;
    }

    static Task hook(Task t, LifecycleHook hook, boolean sidecar) {
        t.setLifecycle(new Lifecycle(hook, sidecar));
        return t;
    }

    static Task leader(Task t) {
        t.setLeader(true);
        return t;
    }

    List<TaskEventType> events(String task) {
        return seen.stream()
                .filter(s -> s.task().equals(task))
                .map(s -> s.event().getType())
                .toList();
    }

    Instant time(String task, TaskEventType type) {
        return seen.stream()
                .filter(s -> s.task().equals(task) && s.event().getType() == type)
                .map(s -> Timestamps.parse(s.event().getTime()))
                .findFirst()
                .orElseThrow();
    }

    /** Waits until all {@code count} tasks of {@code r} run. */
    static void awaitAllRunning(AllocRunner r, int count) {
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> r.allocState().taskStates().size() == count
                        && r.allocState().taskStates().values().stream()
                                .allMatch(s -> s.getState() == TaskState.State.Running));
    }

    /** The runner's spec as the next generation, for an update. */
    static Allocation nextGeneration(AllocRunner r) {
        Allocation newer = r.alloc();
        newer.getMetadata().setGeneration(newer.getMetadata().getGeneration() + 1);
        return newer;
    }

    static void await(AllocRunner r) throws Exception {
        r.terminal().get(20, TimeUnit.SECONDS);
    }

    @Test
    void aSignalReachesOnlyTheTaskItNames() throws Exception {
        AllocRunner r = runner(
                AllocationType.Service,
                task("api", Map.of("exitOnSignal", "SIGHUP")),
                task("web", Map.of("exitOnSignal", "SIGHUP")));
        r.run();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> events("api").contains(TaskEventType.Started)
                        && events("web").contains(TaskEventType.Started));

        r.task("web").signal("SIGHUP", "Template re-rendered");

        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> events("web").contains(TaskEventType.Terminated));
        assertThat(events("web")).containsSubsequence(TaskEventType.Signaling, TaskEventType.Terminated);
        assertThat(events("api")).doesNotContain(TaskEventType.Signaling, TaskEventType.Terminated);
        assertThatThrownBy(() -> r.task("db"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("allocation default/web has no task \"db\"");
    }

    @Test
    void mainStartsOnlyAfterThePrestartTaskExitsZero() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch,
                hook(task("init", Map.of("runFor", "100ms")), LifecycleHook.Prestart, false),
                task("app", Map.of("runFor", "50ms")));
        r.run();
        await(r);
        Instant initDone =
                Timestamps.parse(r.allocState().taskStates().get("init").getFinishedAt());
        Instant appStart =
                Timestamps.parse(r.allocState().taskStates().get("app").getStartedAt());
        assertThat(appStart).isAfterOrEqualTo(initDone);
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Complete);
        assertThat(r.allocState().clientDescription()).isEqualTo("All tasks have completed");
    }

    @Test
    void aPrestartThatFailsForGoodFailsTheAllocationAndMainNeverStarts() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch,
                hook(task("init", Map.of("runFor", "10ms", "exitCode", 1)), LifecycleHook.Prestart, false),
                task("app", Map.of("runFor", "1h")));
        r.run();
        await(r);
        assertThat(events("app")).doesNotContain(TaskEventType.Started);
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Failed);
    }

    @Test
    void anAllocationWhoseSetupFailsIsFailedNotComplete() throws Exception {
        extraHooks.add((AllocHooks.Prerun) ctx -> {
            throw new IllegalStateException("cannot mount the shared volume");
        });
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of("runFor", "1h")), task("web", Map.of()));
        r.run();
        await(r);
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Failed);
        for (String task : List.of("app", "web")) {
            TaskState s = r.allocState().taskStates().get(task);
            assertThat(s.getState()).isEqualTo(TaskState.State.Dead);
            assertThat(s.getFailed()).as("%s failed", task).isTrue();
            assertThat(events(task)).contains(TaskEventType.SetupFailure).doesNotContain(TaskEventType.Started);
        }
    }

    @Test
    void aFailedLeaderGivesSiblingTaskFailed() throws Exception {
        // A service task may not exit; with no restarts allowed, the leader's exit fails it.
        AllocRunner r = runner(
                AllocationType.Service, leader(task("leader", Map.of("runFor", "100ms"))), task("follower", Map.of()));
        r.run();
        await(r);
        assertThat(events("follower"))
                .containsSubsequence(TaskEventType.SiblingTaskFailed, TaskEventType.Killing, TaskEventType.Killed)
                .doesNotContain(TaskEventType.LeaderTaskDead);
        assertThat(r.allocState().taskStates().get("follower").getFailed()).isFalse();
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Failed);
    }

    @Test
    void batchLeaderExitKillsSiblingsNotFailed() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch, leader(task("leader", Map.of("runFor", "100ms"))), task("follower", Map.of()));
        r.run();
        await(r);
        assertThat(events("follower"))
                .containsSubsequence(TaskEventType.LeaderTaskDead, TaskEventType.Killing, TaskEventType.Killed);
        assertThat(r.allocState().taskStates().values())
                .allSatisfy(s -> assertThat(s.getFailed()).isFalse());
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Complete);
    }

    @Test
    void aFailedSiblingKillsTheOthersNamingIt() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch, task("bad", Map.of("runFor", "50ms", "exitCode", 2)), task("good", Map.of()));
        r.run();
        await(r);
        TaskEvent killed = seen.stream()
                .filter(s -> s.task().equals("good") && s.event().getType() == TaskEventType.SiblingTaskFailed)
                .findFirst()
                .orElseThrow()
                .event();
        assertThat(killed.getFailedSibling()).isEqualTo("bad");
        assertThat(r.allocState().taskStates().get("good").getFailed()).isFalse();
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Failed);
    }

    @Test
    void onlySidecarsLeftAreKilledWithMainTasksDead() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch,
                hook(task("proxy", Map.of()), LifecycleHook.Prestart, true),
                task("app", Map.of("runFor", "100ms")));
        r.run();
        await(r);
        assertThat(events("proxy"))
                .containsSubsequence(
                        TaskEventType.Started,
                        TaskEventType.MainTasksDead,
                        TaskEventType.Killing,
                        TaskEventType.Killed);
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Complete);
    }

    @Test
    void poststopRunsAfterTheMainTasksAndIsNotRestarted() throws Exception {
        AllocRunner r = runner(
                AllocationType.Batch,
                task("app", Map.of("runFor", "50ms")),
                hook(task("cleanup", Map.of("runFor", "10ms")), LifecycleHook.Poststop, false));
        r.run();
        await(r);
        assertThat(time("cleanup", TaskEventType.Started)).isAfterOrEqualTo(time("app", TaskEventType.Terminated));
        assertThat(events("cleanup")).containsOnlyOnce(TaskEventType.Started).doesNotContain(TaskEventType.Restarting);
    }

    @Test
    void stopKillsTheLeaderFirstThenTheFollowersTogether() throws Exception {
        AllocRunner r = runner(
                AllocationType.Service,
                leader(task("leader", Map.of("killAfter", "300ms"))),
                task("f1", Map.of("killAfter", "100ms")),
                task("f2", Map.of("killAfter", "100ms")),
                task("f3", Map.of("killAfter", "100ms")));
        r.run();
        awaitAllRunning(r, 4);
        Allocation stop = nextGeneration(r);
        stop.getSpec().setDesiredStatus(DesiredStatus.Stop);
        r.update(stop);
        await(r);
        Instant leaderKilled = time("leader", TaskEventType.Killed);
        List<Instant> followerKilling = List.of(
                time("f1", TaskEventType.Killing),
                time("f2", TaskEventType.Killing),
                time("f3", TaskEventType.Killing));
        assertThat(followerKilling).allSatisfy(t -> assertThat(t).isAfterOrEqualTo(leaderKilled));
        Instant firstFollowerDead = List.of(
                        time("f1", TaskEventType.Killed),
                        time("f2", TaskEventType.Killed),
                        time("f3", TaskEventType.Killed))
                .stream()
                .min(Instant::compareTo)
                .orElseThrow();
        assertThat(followerKilling)
                .as("followers are killed together: every kill begins before any ends")
                .allSatisfy(t -> assertThat(t).isBefore(firstFollowerDead));
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Complete);
        assertThat(r.allocState().observedGeneration()).isEqualTo(2);
    }

    @Test
    void stopKillsSidecarsLast() throws Exception {
        AllocRunner r = runner(
                AllocationType.Service,
                hook(task("proxy", Map.of()), LifecycleHook.Prestart, true),
                leader(task("leader", Map.of("killAfter", "100ms"))),
                task("worker", Map.of("killAfter", "100ms")));
        r.run();
        awaitAllRunning(r, 3);
        Allocation stop = nextGeneration(r);
        stop.getSpec().setDesiredStatus(DesiredStatus.Stop);
        r.update(stop);
        await(r);
        assertThat(time("proxy", TaskEventType.Killing))
                .isAfterOrEqualTo(time("worker", TaskEventType.Killed))
                .isAfterOrEqualTo(time("leader", TaskEventType.Killed));
        assertThat(events("proxy")).doesNotContain(TaskEventType.MainTasksDead);
    }

    @Test
    void aSpecChangeRestartsOnlyTheTasksWhoseDefinitionChanged() throws Exception {
        AllocRunner r = runner(AllocationType.Service, task("same", Map.of()), task("changed", Map.of()));
        r.run();
        awaitAllRunning(r, 2);
        Allocation newer = nextGeneration(r);
        newer.getSpec().task("changed").setConfig(Map.of("stdoutString", "v2"));
        r.update(newer);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> events("changed").stream()
                                .filter(e -> e == TaskEventType.Started)
                                .count()
                        == 2);
        assertThat(events("changed"))
                .containsSubsequence(
                        TaskEventType.RestartSignaled,
                        TaskEventType.Killing,
                        TaskEventType.Killed,
                        TaskEventType.Restarting,
                        TaskEventType.Started);
        assertThat(events("same")).doesNotContain(TaskEventType.RestartSignaled, TaskEventType.Killing);
        assertThat(r.alloc().getSpec().task("changed").getConfig()).containsEntry("stdoutString", "v2");
        assertThat(r.allocState().observedGeneration()).isEqualTo(2);
        assertThat(data.resolve("allocs/default/web/alloc/logs/changed.stdout.0"))
                .hasContent("v2");
        assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Running);
    }

    @Test
    void stopRunsNoUpdateEvenWhenDefinitionsChanged() throws Exception {
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        r.run();
        awaitAllRunning(r, 1);
        Allocation newer = nextGeneration(r);
        newer.getSpec().setDesiredStatus(DesiredStatus.Stop);
        newer.getSpec().task("app").setConfig(Map.of("runFor", "1h"));
        r.update(newer);
        await(r);
        assertThat(events("app"))
                .doesNotContain(TaskEventType.RestartSignaled, TaskEventType.Restarting)
                .containsSubsequence(TaskEventType.Killing, TaskEventType.Killed);
    }

    @Test
    void staleUpdatesAreIgnored() throws Exception {
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        r.run();
        Allocation old = r.alloc();
        old.getMetadata().setGeneration(0L);
        old.getSpec().setDesiredStatus(DesiredStatus.Stop);
        r.update(old);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> r.allocState().clientStatus() == ClientStatus.Running);
        assertThat(r.terminal()).isNotDone();
    }

    @Test
    void destroyOfARunnerNeverRunReturnsAtOnce() throws Exception {
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        long start = System.nanoTime();
        r.destroy();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThat(db.loadAll()).isEmpty();
    }

    @Test
    void destroyKillsTasksAndRemovesTheDirectoryAndState() throws Exception {
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        r.run();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> r.allocState().clientStatus() == ClientStatus.Running);
        r.destroy();
        assertThat(data.resolve("allocs/default/web")).doesNotExist();
        assertThat(db.loadAll()).isEmpty();
        assertThat(r.allocState().taskStates().get("app").getState()).isEqualTo(TaskState.State.Dead);
    }

    @Test
    void aDestroyHookThatThrowsDoesNotKeepTheHooksAfterItFromRunning() throws Exception {
        List<String> ran = new CopyOnWriteArrayList<>();
        extraHooks.add((AllocHooks.Destroy) ctx -> {
            throw new IllegalStateException("state store is full");
        });
        extraHooks.add((AllocHooks.Destroy) ctx -> ran.add("after"));
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        r.run();
        awaitAllRunning(r, 1);
        r.destroy();
        assertThat(ran).containsExactly("after");
        assertThat(hookFailures).containsExactly("destroy: state store is full");
        assertThat(data.resolve("allocs/default/web")).doesNotExist();
        assertThat(db.loadAll()).isEmpty();
    }

    @Test
    void destroyKeepsTheDirectoryAndStateOfATaskThatCannotBeKilledUntilItIsDead() throws Exception {
        StubbornDriver stubborn = new StubbornDriver(mock);
        driver = stubborn;
        maxKillTimeout = Duration.ofMillis(100);
        driverDeadline = Duration.ofMillis(200);
        stopRetry = new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(20)));
        AllocRunner r = runner(AllocationType.Service, task("app", Map.of()));
        r.run();
        awaitAllRunning(r, 1);

        r.destroy(); // its bounded wait is over; the task still runs
        assertThat(stubborn.failedStops()).isPositive();
        assertThat(data.resolve("allocs/default/web")).exists();
        assertThat(db.loadAll())
                .singleElement()
                .satisfies(stored -> assertThat(stored.tasks()
                                .get("app")
                                .localState()
                                .orElseThrow()
                                .driverHandle())
                        .isNotNull());
        assertThat(r.allocState().taskStates().get("app").getState()).isEqualTo(TaskState.State.Running);
        assertThat(events("app")).contains(TaskEventType.DriverFailure).doesNotContain(TaskEventType.Killed);

        stubborn.relent();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(r::destroy);
        assertThat(data.resolve("allocs/default/web")).doesNotExist();
        assertThat(db.loadAll()).isEmpty();
        assertThat(r.allocState().taskStates().get("app").getState()).isEqualTo(TaskState.State.Dead);
        assertThat(events("app")).endsWith(TaskEventType.Killed);
    }
}
