package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.mock.MockDriver;
import dev.drover.gc.DiskUsage;
import dev.drover.gc.GarbageCollector;
import dev.drover.gc.GcPolicy;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.testing.MockApi;
import dev.drover.testing.StubbornDriver;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The controller and its reconciler called directly, with a driver whose stops fail until the test lets them work. */
class AllocationControllerTest {

    static final AllocId ID = new AllocId("default", "stuck");

    @TempDir
    Path data;
    final StateDB db = StateDB.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final StubbornDriver stubborn = new StubbornDriver(mock);
    MockApi api;
    StatusWriter writer;
    EventRecorder events;
    GarbageCollector gc;
    AllocationController controller;

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        writer = new StatusWriter((id, status) -> {
        }, StatusWriter.Timing.DEFAULT);
        events = new EventRecorder(new EventPoster(api.client()), "node-a");
        gc = new GarbageCollector(new GcPolicy(Duration.ofHours(1), 1, 1, 1000, 2), new DiskUsage() {
            @Override
            public double disk() {
                return 0;
            }

            @Override
            public double inodes() {
                return 0;
            }
        });
        DroverMetrics metrics = new DroverMetrics(new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3],
                () -> new long[2], () -> new long[3]));
        controller = new AllocationController("node-a", self -> new AllocRunnerConfig(data,
                new DriverRegistry(List.of(stubborn)), List.of(), List.of(), db, self, PreviousAllocations.NONE,
                Clock.systemUTC(), new SplittableRandom(1), Duration.ofMillis(100), Duration.ofMillis(200),
                new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(20)))), writer, events, metrics, gc, null);
    }

    @AfterEach
    void stop() throws Exception {
        stubborn.relent();
        controller.shutdown();
        gc.close();
        events.close();
        writer.close();
        mock.close();
        db.close();
        api.close();
    }

    static Allocation alloc() {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder().withName(ID.name()).withNamespace(ID.namespace()).withUid("uid-stuck")
                .withGeneration(1L).build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-a");
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of());
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void aDeleteWhoseKillKeepsFailingKeepsTheFinalizerAndTheStateUntilTheTaskIsDead() throws Exception {
        Allocation a = alloc();
        controller.reconcile(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> controller.runner(ID)
                .map(r -> r.allocState().clientStatus() == ClientStatus.Running).orElse(false));
        AllocationReconciler reconciler = new AllocationReconciler(controller);

        DeleteControl first = reconciler.cleanup(a, null);
        assertThat(first.isRemoveFinalizer()).as("the task may still be alive").isFalse();
        assertThat(first.getScheduleDelay()).isPresent();
        assertThat(stubborn.failedStops()).isPositive();
        assertThat(data.resolve("allocs/default/stuck")).exists();
        assertThat(db.loadAll()).singleElement().satisfies(stored ->
                assertThat(stored.tasks().get("main").localState().orElseThrow().driverHandle()).isNotNull());
        assertThat(reconciler.cleanup(a, null).isRemoveFinalizer()).as("asked again: still alive").isFalse();

        stubborn.relent();
        await().atMost(Duration.ofSeconds(10)).until(() -> reconciler.cleanup(a, null).isRemoveFinalizer());
        assertThat(data.resolve("allocs/default/stuck")).doesNotExist();
        assertThat(db.loadAll()).isEmpty();
    }
}
