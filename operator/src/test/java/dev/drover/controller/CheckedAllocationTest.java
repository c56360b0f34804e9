package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.controller.events.EventRate;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.events.RecordedEvents;
import dev.drover.controller.events.TaskEventFilter;
import dev.drover.controller.status.AllocationStatuses;
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
import dev.drover.taskrunner.checks.FakeProber;
import dev.drover.taskrunner.checks.ProbeResult;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An allocation whose task has a check, through the controller as the reconciler calls it, its probes pushed by the
 * test: what its status, conditions, Kubernetes Events and metrics say, and how often its status is written.
 */
class CheckedAllocationTest {

    static final String NODE = "node-a";
    static final AllocId ID = new AllocId("default", "web");
    static final String[] LABELS = {"namespace", "allocation", "task", "check", "status"};

    @TempDir
    Path data;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final FakeProber prober = new FakeProber();
    final RecordedStatuses statuses = new RecordedStatuses();
    final AtomicInteger writes = new AtomicInteger();
    final RecordedEvents recorded = new RecordedEvents();
    final DroverMetrics metrics = new DroverMetrics(
            new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3], () -> new long[5], () -> new long[3]));
    StatusWriter writer;
    EventRecorder events;
    GarbageCollector gc;
    AllocationController controller;

    @BeforeEach
    void start() {
        writer = new StatusWriter(
                (id, status) -> {
                    writes.incrementAndGet();
                    statuses.write(id, status);
                },
                new StatusWriter.Timing(
                        Duration.ofMillis(10),
                        Duration.ofSeconds(1),
                        Duration.ofMillis(10),
                        Duration.ofMillis(100),
                        Duration.ofMillis(10)));
        // each check's change its own Event, whose message these tests read
        events = new EventRecorder(recorded, NODE, new EventRate(1000, 1000), TaskEventFilter.ALL);
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
                        List.of(),
                        null,
                        prober),
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

    static Allocation checked() {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(ID.name())
                .withNamespace(ID.namespace())
                .withUid("uid-web")
                .withGeneration(1L)
                .build());
        Task t = new Task();
        t.setName("server");
        t.setDriver("mock");
        t.setConfig(Map.of("runFor", "1h"));
        Check c = new Check("http", CheckType.HTTP);
        c.setPort(new IntOrString(8080));
        c.setFailureThreshold(1);
        t.setChecks(List.of(c));
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(NODE);
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    Condition condition(String type) {
        return statuses.condition(ID, type).orElse(null);
    }

    void awaitCondition(String type, String status, String reason) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            Condition c = condition(type);
            return c != null && status.equals(c.getStatus()) && reason.equals(c.getReason());
        });
    }

    Double series(String status) {
        return metrics.registry()
                .getSampleValue(
                        "drover_check_status", LABELS, new String[] {"default", "web", "server", "http", status});
    }

    Double transitions(String to) {
        return metrics.registry()
                .getSampleValue(
                        "drover_check_transitions_total",
                        new String[] {"namespace", "allocation", "task", "check", "to"},
                        new String[] {"default", "web", "server", "http", to});
    }

    List<Event> checkEvents() {
        return recorded.all().stream()
                .filter(e -> "CheckStatusChanged".equals(e.getReason()))
                .toList();
    }

    @Test
    void readyWaitsForTheChecksAndTheStatusChangesOnlyWithThem() throws Exception {
        Allocation a = checked();
        controller.reconcile(a);
        FakeProber.Probed probing = prober.next();

        awaitCondition("Healthy", "False", "CheckCritical");
        assertThat(statuses.clientStatus(ID)).isEqualTo(ClientStatus.Running);
        assertThat(condition("Healthy").getMessage())
                .isEqualTo("Task \"server\": check \"http\" is critical: no probe has run yet");
        assertThat(condition("Ready").getStatus()).isEqualTo("False");
        assertThat(condition("Ready").getReason()).isEqualTo("Unhealthy");
        assertThat(series("critical")).isEqualTo(1.0);
        assertThat(series("passing")).isEqualTo(0.0);

        probing.push("http", ProbeResult.passing("HTTP 200: ok"));
        awaitCondition("Ready", "True", "TasksRunning");
        assertThat(condition("Healthy").getReason()).isEqualTo("ChecksPassing");
        CheckStatus shown = statuses.of(ID)
                .orElseThrow()
                .getTaskStates()
                .get("server")
                .getChecks()
                .getFirst();
        assertThat(shown.getStatus()).isEqualTo(CheckStatus.Status.PASSING);
        assertThat(shown.getOutput()).isEqualTo("HTTP 200: ok");
        assertThat(series("passing")).isEqualTo(1.0);
        assertThat(series("critical")).isEqualTo(0.0);
        assertThat(transitions("passing")).isEqualTo(1.0);
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(checkEvents()).singleElement().satisfies(e -> {
                    assertThat(e.getType()).isEqualTo("Normal");
                    assertThat(e.getMessage())
                            .isEqualTo("Task server: check \"http\" is passing (was critical): HTTP 200: ok");
                }));

        int written = writes.get();
        long skipped = writer.skipped();
        for (int i = 0; i < 20; i++) {
            probing.push("http", ProbeResult.passing("HTTP 200: ok, request " + i));
        }
        probing.push("http", ProbeResult.critical("HTTP 503: down"));
        awaitCondition("Healthy", "False", "CheckCritical");
        assertThat(writes.get())
                .as("one write for the change, none for the checks that kept passing")
                .isEqualTo(written + 1);
        assertThat(writer.skipped()).as("nothing even published for them").isEqualTo(skipped);
        assertThat(condition("Ready").getMessage())
                .isEqualTo("Task \"server\": check \"http\" is critical: HTTP 503: down");
        assertThat(transitions("critical")).isEqualTo(1.0);
        await().atMost(Duration.ofSeconds(10)).until(() -> checkEvents().size() == 2);
        assertThat(checkEvents())
                .filteredOn(e -> "Warning".equals(e.getType()))
                .singleElement()
                .satisfies(e -> assertThat(e.getMessage())
                        .isEqualTo("Task server: check \"http\" is critical (was passing): HTTP 503: down"));
    }

    @Test
    void aStaleCheckKeepsItsLastStatusForReadyAndSaysItIsStale() throws Exception {
        controller.reconcile(checked());
        FakeProber.Probed probing = prober.next();
        assertThat(probing.allocation).isEqualTo(ID.key());

        probing.stale("http"); // its first probe still waits for a slot: critical still, never a pass
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(condition("Healthy").getMessage())
                        .isEqualTo("Task \"server\": check \"http\" is critical: stale: no probe has run yet, no"
                                + " probe slot was free"));
        assertThat(condition("Ready").getStatus()).isEqualTo("False");

        probing.push("http", ProbeResult.passing("HTTP 200: ok"));
        awaitCondition("Ready", "True", "TasksRunning");
        probing.stale("http");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(statuses.of(ID)
                                .orElseThrow()
                                .getTaskStates()
                                .get("server")
                                .getChecks()
                                .getFirst()
                                .getOutput())
                        .startsWith("stale: not probed since "));
        assertThat(condition("Ready").getStatus())
                .as("its last status, passing, kept")
                .isEqualTo("True");
        assertThat(series("passing")).isEqualTo(1.0);
        assertThat(transitions("passing")).as("no change of status").isEqualTo(1.0);
    }

    @Test
    void theSeriesOfAnAllocationGoWhenItsTasksEnd() throws Exception {
        Allocation a = checked();
        controller.reconcile(a);
        FakeProber.Probed probing = prober.next();
        probing.push("http", ProbeResult.passing("ok"));
        await().atMost(Duration.ofSeconds(10)).until(() -> Double.valueOf(1.0).equals(series("passing")));
        assertThat(transitions("passing")).isEqualTo(1.0);

        Allocation stopped = checked();
        stopped.getMetadata().setGeneration(2L);
        stopped.getSpec().setDesiredStatus(DesiredStatus.Stop);
        controller.reconcile(stopped);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> AllocationStatuses.isTerminal(statuses.of(ID).orElse(null)));
        await().atMost(Duration.ofSeconds(10)).until(() -> series("passing") == null);
        assertThat(series("critical")).isNull();
        assertThat(transitions("passing")).as("no series of a gone allocation").isNull();
        assertThat(probing.closed()).isTrue();
        assertThat(condition("Ready").getStatus()).isEqualTo("False");
    }
}
