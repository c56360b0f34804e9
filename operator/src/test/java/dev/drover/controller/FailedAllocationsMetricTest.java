package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.controller.events.EventRate;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.events.RecordedEvents;
import dev.drover.controller.status.StatusWriter;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.mock.MockDriver;
import dev.drover.gc.DiskUsage;
import dev.drover.gc.GarbageCollector;
import dev.drover.gc.GcPolicy;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskRunnerConfig;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
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

/** drover_allocations_failed_total counts each allocation once, when its client status becomes Failed. */
class FailedAllocationsMetricTest {

    static final String NODE = "node-a";

    @TempDir
    Path data;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final RecordedStatuses statuses = new RecordedStatuses();
    final DroverMetrics metrics = new DroverMetrics(
            new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3], () -> new long[5], () -> new long[3]));
    StatusWriter writer;
    EventRecorder events;
    GarbageCollector gc;
    AllocationController controller;

    @BeforeEach
    void start() {
        writer = new StatusWriter(
                statuses,
                new StatusWriter.Timing(
                        Duration.ofMillis(10),
                        Duration.ofSeconds(1),
                        Duration.ofMillis(10),
                        Duration.ofMillis(100),
                        Duration.ofMillis(10)));
        events = new EventRecorder(new RecordedEvents(), NODE, new EventRate(1000, 1000));
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
        controller = new AllocationController(
                NODE,
                new AllocRunnerConfig(
                        data,
                        new TaskRunnerConfig.Shared(
                                new DriverRegistry(List.of(mock)),
                                db,
                                Clock.systemUTC(),
                                new SplittableRandom(1),
                                Duration.ofMillis(100),
                                Duration.ofMillis(200),
                                new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(20)))),
                        List.of(),
                        List.of()),
                PreviousAllocations.NONE,
                writer,
                events,
                metrics,
                gc,
                null,
                0,
                new Admissions(new NodeAdmission(new CpuMemory(1_000_000, 1_000_000)), null, () -> {}));
    }

    @AfterEach
    void stop() throws Exception {
        controller.shutdown();
        gc.close();
        events.close();
        writer.close();
        mock.close();
        db.close();
    }

    static Allocation batch(String name, int exitCode) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(name)
                .withNamespace("default")
                .withUid("uid-" + name)
                .withGeneration(1L)
                .build());
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of("runFor", "100ms", "exitCode", exitCode));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(NODE);
        spec.setType(AllocationType.Batch);
        spec.setTasks(List.of(t));
        spec.setRestartPolicy(new RestartPolicy(0, "10m", "1s", RestartMode.Fail));
        a.setSpec(spec);
        return a;
    }

    double failed() {
        return metrics.registry().getSampleValue("drover_allocations_failed_total");
    }

    void awaitStatus(Allocation a, ClientStatus status) {
        AllocId id = new AllocId("default", a.getMetadata().getName());
        await().atMost(Duration.ofSeconds(10)).until(() -> statuses.clientStatus(id) == status);
    }

    @Test
    void eachFailedAllocationCountsOnceAndOneThatCompletesNotAtAll() throws Exception {
        Allocation fails = batch("fails", 1);
        Allocation completes = batch("completes", 0);
        controller.reconcile(fails);
        controller.reconcile(completes);

        awaitStatus(fails, ClientStatus.Failed);
        awaitStatus(completes, ClientStatus.Complete);
        assertThat(failed()).isEqualTo(1.0);

        controller.reconcile(fails); // the watch delivers it again: still the one failure
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> failed() == 1.0);
    }
}
