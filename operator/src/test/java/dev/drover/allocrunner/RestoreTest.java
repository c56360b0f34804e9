package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.state.StoredAllocation;
import dev.drover.taskrunner.TaskRunnerConfig;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent restarts with 50 raw_exec allocations running: every process is kept, nothing restarts. */
class RestoreTest {

    static final int ALLOCS = 50;

    @TempDir
    Path data;

    final List<TaskEvent> events = new CopyOnWriteArrayList<>();

    AllocRunnerConfig config(StateDB db, RawExecDriver driver) {
        return new AllocRunnerConfig(
                data,
                new TaskRunnerConfig.Shared(
                        new DriverRegistry(List.of(driver)),
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(10),
                        TaskRunnerConfig.StopRetry.DEFAULT),
                List.of(),
                List.of());
    }

    final AllocStateListener listener = (id, state, task, taskEvents) -> events.addAll(taskEvents);

    static Allocation alloc(int i) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("svc-" + i)
                .withNamespace("default")
                .withGeneration(1L)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        Task t = new Task();
        t.setName("main");
        t.setDriver("raw_exec");
        t.setConfig(Map.of("command", "/bin/sleep", "args", List.of("1000")));
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void fiftyRunningAllocationsAreReattachedWithoutRestarts() throws Exception {
        Map<String, String> pids = new HashMap<>();
        try (StateDB db = StateStores.open(data.resolve("state"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            List<AllocRunner> runners = new ArrayList<>();
            for (int i = 0; i < ALLOCS; i++) {
                AllocRunner r = new AllocRunner(config(db, driver), alloc(i), listener, PreviousAllocations.NONE);
                runners.add(r);
                r.run();
            }
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> runners.stream().allMatch(r -> r.allocState().clientStatus() == ClientStatus.Running));
            for (AllocRunner r : runners) {
                pids.put(
                        r.id().name(),
                        db.getTaskLocalState(r.id(), "main")
                                .orElseThrow()
                                .driverHandle()
                                .get("pid"));
                r.shutdown(); // the agent stops; tasks keep running
            }
        }
        events.clear();

        List<AllocRunner> restored = new ArrayList<>();
        try (StateDB db = StateStores.open(data.resolve("state"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            try {
                List<StoredAllocation> stored = db.loadAll();
                assertThat(stored).hasSize(ALLOCS);
                for (StoredAllocation s : stored) {
                    AllocRunner r = AllocRunner.restore(config(db, driver), s, listener, PreviousAllocations.NONE);
                    restored.add(r);
                    r.run();
                }
                for (AllocRunner r : restored) {
                    assertThat(r.allocState().clientStatus()).isEqualTo(ClientStatus.Running);
                    assertThat(r.allocState().taskStates().get("main").getRestarts())
                            .isZero();
                    String pid = db.getTaskLocalState(r.id(), "main")
                            .orElseThrow()
                            .driverHandle()
                            .get("pid");
                    assertThat(pid).isEqualTo(pids.get(r.id().name()));
                    assertThat(ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive))
                            .contains(true);
                }
                Thread.sleep(300); // give a wrongly restarted task time to show itself
                assertThat(events)
                        .extracting(TaskEvent::getType)
                        .doesNotContain(TaskEventType.Started, TaskEventType.Restarting, TaskEventType.Terminated);
            } finally {
                for (AllocRunner r : restored) {
                    r.destroy();
                }
            }
            assertThat(db.loadAll()).isEmpty();
        }
        for (String pid : pids.values()) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> ProcessHandle.of(Long.parseLong(pid))
                            .map(p -> !p.isAlive())
                            .orElse(true));
        }
    }

    /** An allocation the API server no longer has is destroyed at restore, before it ever runs: its process dies too. */
    @Test
    void aRestoredAllocationDestroyedBeforeItRunsKillsItsProcess() throws Exception {
        String pid;
        try (StateDB db = StateStores.open(data.resolve("state"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunner r = new AllocRunner(config(db, driver), alloc(0), listener, PreviousAllocations.NONE);
            r.run();
            await().atMost(Duration.ofSeconds(30)).until(() -> r.allocState().clientStatus() == ClientStatus.Running);
            pid = db.getTaskLocalState(r.id(), "main")
                    .orElseThrow()
                    .driverHandle()
                    .get("pid");
            r.shutdown();
        }
        assertThat(ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive))
                .contains(true);
        events.clear();
        try (StateDB db = StateStores.open(data.resolve("state"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunner r = AllocRunner.restore(
                    config(db, driver), db.loadAll().getFirst(), listener, PreviousAllocations.NONE);
            r.destroy();
            assertThat(db.loadAll()).isEmpty();
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ProcessHandle.of(Long.parseLong(pid))
                        .map(p -> !p.isAlive())
                        .orElse(true));
        assertThat(events).extracting(TaskEvent::getType).doesNotContain(TaskEventType.Started);
    }
}
