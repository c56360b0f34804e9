package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.controller.events.EventRate;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.events.RecordedEvents;
import dev.drover.controller.status.AllocationStatuses;
import dev.drover.controller.status.StatusWriter;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.devices.DeviceLedger;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.DeviceReservationHook;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.mock.MockDriver;
import dev.drover.gc.DiskUsage;
import dev.drover.gc.GarbageCollector;
import dev.drover.gc.GcPolicy;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.state.StoredAllocation;
import dev.drover.state.StoredLoad;
import dev.drover.state.TaskLocalState;
import dev.drover.taskrunner.StoredHandles;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.testing.StubbornDriver;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller called directly, as the reconciler calls it, against the in-memory store and the mock driver, with
 * no API server: what it publishes goes to a recorded status sink and a recorded Event sink.
 */
class AllocationControllerTest {

    static final String NODE = "node-a";
    static final AllocId ID = new AllocId("default", "stuck");

    @TempDir
    Path data;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final StubbornDriver stubborn = new StubbornDriver(mock);
    final RecordedStatuses statuses = new RecordedStatuses();
    final RecordedEvents recorded = new RecordedEvents();
    final List<AllocationController> controllers = new ArrayList<>();
    StatusWriter writer;
    EventRecorder events;
    GarbageCollector gc;
    DeviceManager devices;
    AllocationController controller;
    /** What the next controller's node may hand out; each controller (an agent's start) admits afresh. */
    CpuMemory allocatable = new CpuMemory(1_000_000, 1_000_000);

    NodeAdmission admission;
    final AtomicInteger admissionChanges = new AtomicInteger();
    /** Runs, on the admitting thread under the admission lock, after each change of what is requested. */
    volatile Runnable onAdmissionChange = () -> {};
    /** The kill timeout's cap of the next controller: its destroys wait twice this, and the driver's deadline. */
    Duration maxKillTimeout = Duration.ofMillis(100);
    /** The name of each allocation a runner was created for by {@link #oneAtATime}, in order. */
    final List<String> created = new CopyOnWriteArrayList<>();

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
        events = new EventRecorder(recorded, NODE, new EventRate(1000, 1000));
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
        controller = controller(0, null, List.of(), UnaryOperator.identity());
    }

    AllocationController controller(
            int concurrentStarts,
            DeviceLedger ledger,
            List<TaskPrestartHook> hooks,
            UnaryOperator<RunnerFactory> factory) {
        DroverMetrics metrics = new DroverMetrics(
                new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3], () -> new long[5], () -> new long[3]));
        AllocationController c = new AllocationController(
                NODE,
                new AllocRunnerConfig(
                        data,
                        new TaskRunnerConfig.Shared(
                                new DriverRegistry(List.of(stubborn)),
                                db,
                                Clock.systemUTC(),
                                new SplittableRandom(1),
                                maxKillTimeout,
                                Duration.ofMillis(200),
                                new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(20)))),
                        hooks,
                        List.of()),
                PreviousAllocations.NONE,
                writer,
                events,
                metrics,
                gc,
                ledger,
                concurrentStarts,
                new Admissions(admission = new NodeAdmission(allocatable), ledger, () -> {
                    admissionChanges.incrementAndGet();
                    onAdmissionChange.run();
                }),
                dev.drover.controller.services.AllocationEndpoints.NONE,
                factory);
        controllers.add(c);
        return c;
    }

    @AfterEach
    void stop() throws Exception {
        stubborn.relent();
        for (AllocationController c : controllers.reversed()) {
            c.shutdown();
        }
        gc.close();
        events.close();
        writer.close();
        if (devices != null) {
            devices.close();
        }
        mock.close();
        db.close();
    }

    static Allocation alloc() {
        return alloc(ID.name(), Map.of());
    }

    static Allocation alloc(String name, Map<String, Object> config) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(name)
                .withNamespace("default")
                .withUid("uid-" + name)
                .withGeneration(1L)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(NODE);
        spec.setTasks(List.of(task("main", config)));
        a.setSpec(spec);
        return a;
    }

    /** A batch allocation whose task runs for {@code runFor} and ends well. */
    static Allocation batch(String name, String runFor) {
        Allocation a = alloc(name, Map.of("runFor", runFor));
        a.getSpec().setType(AllocationType.Batch);
        return a;
    }

    static Task task(String name, Map<String, Object> config) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        t.setConfig(config);
        return t;
    }

    /** {@code a} as the API server has it after a spec change: the next generation. */
    static Allocation nextGeneration(Allocation a) {
        Allocation next = UnreadableAllocations.serialization().clone(a);
        next.getMetadata().setGeneration(a.getMetadata().getGeneration() + 1);
        return next;
    }

    static AllocId id(Allocation a) {
        return new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
    }

    void awaitStatus(Allocation a, ClientStatus status) {
        await().atMost(Duration.ofSeconds(10)).until(() -> statuses.clientStatus(id(a)) == status);
    }

    @Test
    void aNewAllocationRunsAndItsStatusAndTaskEventsArePublished() throws Exception {
        Allocation a = alloc("web", Map.of("runFor", "1h"));

        controller.reconcile(a);

        awaitStatus(a, ClientStatus.Running);
        assertThat(statuses.of(id(a)).orElseThrow().getObservedGeneration()).isEqualTo(1L);
        assertThat(statuses.condition(id(a), "SpecValid").orElseThrow().getStatus())
                .isEqualTo("True");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.reasons("web").contains("Started"));
        assertThat(controller.runner(id(a))).isPresent();
        assertThat(controller.countByClientStatus()).containsEntry(ClientStatus.Running, 1);
    }

    @Test
    void aSpecChangeIsAppliedInPlaceAndAddingATaskIsRefusedWhileTheRunnerGoesOn() throws Exception {
        Allocation a = alloc("web", Map.of("runFor", "1h"));
        controller.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        AllocRunner runner = controller.runner(id(a)).orElseThrow();

        Allocation changed = nextGeneration(a);
        changed.getSpec().setTasks(List.of(task("main", Map.of("runFor", "2h"))));
        controller.reconcile(changed);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.of(id(a))
                        .map(s -> Long.valueOf(2).equals(s.getObservedGeneration()))
                        .orElse(false));
        assertThat(controller.runner(id(a)))
                .as("the same runner, updated in place")
                .containsSame(runner);
        assertThat(runner.alloc().getSpec().getTasks().getFirst().getConfig()).containsEntry("runFor", "2h");

        Allocation grown = nextGeneration(changed);
        grown.getSpec().setTasks(List.of(task("main", Map.of("runFor", "2h")), task("side", Map.of())));
        controller.reconcile(grown);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "SpecValid")
                        .map(c -> c.getStatus().equals("False"))
                        .orElse(false));
        assertThat(statuses.condition(id(a), "SpecValid").orElseThrow().getMessage())
                .contains("spec.tasks");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.reasons("web").contains("FailedValidation"));
        assertThat(controller.runner(id(a))).containsSame(runner);
        assertThat(runner.allocState().clientStatus())
                .as("it keeps running its last good spec")
                .isEqualTo(ClientStatus.Running);
    }

    @Test
    void aDesiredStopEndsTheTasksAndTheStatusBecomesTerminal() throws Exception {
        Allocation a = alloc("web", Map.of("runFor", "1h"));
        controller.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        stubborn.relent();

        Allocation stopped = nextGeneration(a);
        stopped.getSpec().setDesiredStatus(DesiredStatus.Stop);
        controller.reconcile(stopped);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> AllocationStatuses.isTerminal(statuses.of(id(a)).orElse(null)));
        assertThat(controller
                        .runner(id(a))
                        .orElseThrow()
                        .taskRunners()
                        .get("main")
                        .done())
                .isDone();
        assertThat(statuses.condition(id(a), "Complete").orElseThrow().getMessage())
                .as("a stopped allocation whose tasks were killed is Complete, as its client status")
                .isEqualTo("All tasks have completed: \"main\" was killed");
        assertThat(statuses.condition(id(a), "Failed")).isEmpty();
    }

    @Test
    void aTaskThatEndsMakesTheAllocationComplete() throws Exception {
        Allocation a = batch("once", "10ms");

        controller.reconcile(a);

        awaitStatus(a, ClientStatus.Complete);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.reasons("once").contains("Terminated"));
        assertThat(statuses.condition(id(a), "Complete").orElseThrow().getStatus())
                .isEqualTo("True");
        assertThat(statuses.condition(id(a), "Complete").orElseThrow().getReason())
                .isEqualTo("TasksComplete");
    }

    /** A restarted agent rebuilds the Failed condition it wrote, transition time and all: it writes nothing. */
    @Test
    void aRestartedAgentKeepsAFailedAllocationsConditionAndWritesNothing() throws Exception {
        Allocation a = batch("broken", "10ms");
        a.getSpec().getTasks().getFirst().setConfig(Map.of("runFor", "10ms", "exitCode", 3));
        a.getSpec().setRestartPolicy(new RestartPolicy(0, "10m", "1s", RestartMode.Fail));
        controller.reconcile(a);
        awaitStatus(a, ClientStatus.Failed);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "Failed").isPresent());
        assertThat(statuses.condition(id(a), "Failed").orElseThrow().getReason())
                .isEqualTo("RestartsExhausted");
        assertThat(statuses.condition(id(a), "Failed").orElseThrow().getMessage())
                .startsWith("Task \"main\" failed: NotRestarting: ")
                .endsWith("; it last exited with code 3");
        controller.shutdown();
        controllers.remove(controller);
        // what the run still had to write (its last events, batched) lands before the count is taken
        long[] seen = {-1};
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> {
                    long now = writer.writes();
                    boolean settled = now == seen[0];
                    seen[0] = now;
                    return settled;
                });
        long writes = seen[0];
        Condition failed = statuses.condition(id(a), "Failed").orElseThrow();

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        next.restore();
        Allocation fromApi = UnreadableAllocations.serialization().clone(a);
        fromApi.setStatus(
                UnreadableAllocations.serialization().clone(statuses.of(id(a)).orElseThrow()));
        next.reconcile(fromApi);

        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> writer.writes() == writes);
        assertThat(statuses.condition(id(a), "Failed")).contains(failed);
        assertThat(statuses.condition(id(a), "Complete")).isEmpty();
    }

    @Test
    void anAllocationDeletedWhileItsRunnerIsCreatedNeverRuns() throws Exception {
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CompletableFuture<AllocRunner> made = new CompletableFuture<>();
        AllocationController held = controller(0, null, List.of(), real -> new RunnerFactory() {
            @Override
            public AllocRunner create(Allocation a, AllocStateListener listener) {
                AllocRunner r = real.create(a, listener);
                made.complete(r);
                creating.countDown();
                try {
                    proceed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return r;
            }

            @Override
            public AllocRunner restore(StoredAllocation stored, AllocStateListener listener) {
                return real.restore(stored, listener);
            }
        });
        Allocation a = alloc("web", Map.of("runFor", "1h"));
        Thread reconcile = Thread.ofVirtual().start(() -> {
            try {
                held.reconcile(a);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(creating.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(held.delete(a))
                .as("nothing of it runs yet: the delete completes")
                .isTrue();
        proceed.countDown();
        reconcile.join();

        AllocRunner runner = made.get();
        assertThat(runner.allocState().taskStates().values())
                .as("never started")
                .allSatisfy(s -> assertThat(s.getStartedAt()).isNull());
        assertThat(held.size()).isZero();
        assertThat(held.runner(id(a))).isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> db.loadAll().isEmpty());
        assertThat(data.resolve("allocs/default/web")).doesNotExist();
        assertThat(recorded.reasons("web")).doesNotContain("Started");
    }

    @Test
    void anAllocationDeletedWhileWaitingForAStartSlotIsNeverTakenOn() throws Exception {
        CountDownLatch firstCreating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicInteger createdSecond = new AtomicInteger();
        AllocationController gated = controller(1, null, List.of(), real -> new RunnerFactory() {
            @Override
            public AllocRunner create(Allocation a, AllocStateListener listener) {
                if (a.getMetadata().getName().equals("second")) {
                    createdSecond.incrementAndGet();
                    return real.create(a, listener);
                }
                firstCreating.countDown();
                try {
                    proceed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return real.create(a, listener);
            }

            @Override
            public AllocRunner restore(StoredAllocation stored, AllocStateListener listener) {
                return real.restore(stored, listener);
            }
        });
        Allocation first = alloc("first", Map.of("runFor", "1h"));
        Allocation second = alloc("second", Map.of("runFor", "1h"));
        Thread starting = Thread.ofVirtual().start(() -> {
            try {
                gated.reconcile(first);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(firstCreating.await(10, TimeUnit.SECONDS)).isTrue();

        gated.reconcile(second);
        assertThat(gated.waitingToStart()).as("the one slot is taken").isEqualTo(1);
        assertThat(gated.delete(second)).isTrue();
        assertThat(gated.waitingToStart()).isZero();
        proceed.countDown();
        starting.join();

        awaitStatus(first, ClientStatus.Running);
        assertThat(createdSecond).as("never taken on").hasValue(0);
        assertThat(statuses.of(id(second))).isEmpty();
        assertThat(gated.size()).isEqualTo(1);
        assertThat(db.loadAll()).extracting(StoredAllocation::id).containsExactly(id(first));
    }

    @Test
    void aCollectedTerminalAllocationIsDestroyedAndNeverRunAgain() throws Exception {
        gc.close();
        gc = new GarbageCollector(new GcPolicy(Duration.ofHours(1), 1, 1, 0, 2), DiskUsage.of(data));
        AllocationController collecting = controller(0, null, List.of(), UnaryOperator.identity());
        Allocation a = batch("once", "10ms");

        collecting.reconcile(a);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> collecting.size() == 0
                        && db.loadAll().isEmpty()
                        && !Files.exists(data.resolve("allocs/default/once")));
        AllocationStatus last = statuses.of(id(a)).orElseThrow();
        assertThat(last.getClientStatus()).isEqualTo(ClientStatus.Complete);

        a.setStatus(last);
        collecting.reconcile(a); // the API server's copy, still there, with the status this agent wrote

        assertThat(collecting.size())
                .as("terminal and collected: not run again")
                .isZero();
        assertThat(db.loadAll()).isEmpty();
    }

    @Test
    void restoredRunnersWaitForTheApiServerAndTheSweepDestroysThoseItNoLongerHas() throws Exception {
        Allocation kept = alloc("kept", Map.of("runFor", "1h"));
        Allocation gone = alloc("gone", Map.of("runFor", "1h"));
        controller.reconcile(kept);
        controller.reconcile(gone);
        awaitStatus(kept, ClientStatus.Running);
        awaitStatus(gone, ClientStatus.Running);
        controller.shutdown(); // the agent stops; its tasks keep running
        controllers.remove(controller);
        stubborn.relent(); // the sweep's kill of the gone allocation's task works at once

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        assertThat(next.restore()).isEqualTo(2);
        assertThat(next.runner(id(kept)))
                .as("not run until the API server confirms it")
                .isEmpty();

        next.reconcile(kept);
        assertThat(next.runner(id(kept))).isPresent();
        assertThat(next.runner(id(kept))
                        .orElseThrow()
                        .allocState()
                        .taskStates()
                        .get("main")
                        .getRestarts())
                .as("its task was taken over, not restarted")
                .isZero();
        assertThat(next.sweep(List.of(kept))).isEqualTo(1);

        assertThat(data.resolve("allocs/default/gone")).doesNotExist();
        assertThat(db.loadAll()).extracting(StoredAllocation::id).containsExactly(id(kept));
        assertThat(next.size()).isEqualTo(1);
        assertThat(statuses.clientStatus(id(kept))).isEqualTo(ClientStatus.Running);
    }

    /** {@code a}, a Service that runs for an hour and is restarted 10 ms after it ends. */
    static Allocation service(String name) {
        Allocation a = alloc(name, Map.of("runFor", "1h"));
        a.getSpec().setRestartPolicy(new RestartPolicy(3, "10m", "10ms", RestartMode.Fail));
        return a;
    }

    /** Runs {@code a} until Running, then stops this agent (its tasks keep running). */
    void runThenStopTheAgent(Allocation a) throws InterruptedException {
        controller.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        controller.shutdown();
        controllers.remove(controller);
        stubborn.relent();
    }

    /** While no agent runs, the task's process ends: gone, and its stored handle says it ran out. */
    void endsWhileTheAgentIsAway(AllocId id, String task) {
        TaskLocalState local = db.getTaskLocalState(id, task).orElseThrow();
        mock.destroy(StoredHandles.fromStored(local.driverHandle()));
        Map<String, String> ranOut = new HashMap<>(local.driverHandle());
        ranOut.put("runForNanos", "0");
        db.putTaskLocalState(id, task, local.withDriverHandle(ranOut));
    }

    boolean terminatedSeen(AllocId id) {
        return db.getTaskState(id, "main").orElseThrow().getEvents().stream()
                .anyMatch(e -> e.getType() == TaskEventType.Terminated);
    }

    @Test
    void aRestoredTaskIsSupervisedAndRunningBeforeTheApiServerAnswersAndWritesNothing() throws Exception {
        Allocation a = service("web");
        runThenStopTheAgent(a);
        int starts = stubborn.starts();

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        long writes = writer.writes();
        next.restore();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> next.countByClientStatus().getOrDefault(ClientStatus.Running, 0) == 1);
        assertThat(stubborn.starts()).as("reattached, not started").isEqualTo(starts);

        mock.destroy(StoredHandles.fromStored(
                db.getTaskLocalState(id(a), "main").orElseThrow().driverHandle()));
        await().atMost(Duration.ofSeconds(10)).until(() -> terminatedSeen(id(a)));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> stubborn.starts() == starts);
        assertThat(writer.writes())
                .as("nothing written before the API server answers")
                .isEqualTo(writes);

        next.reconcile(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> stubborn.starts() == starts + 1);
        awaitStatus(a, ClientStatus.Running);
    }

    /** As the agent does: the store's read begins before the controller exists; each runner reattaches as rebuilt. */
    @Test
    void everyRestoredTaskOfAReadBegunEarlyIsReattachedAndCountedRunningNoneStarted() throws Exception {
        List<Allocation> running = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            Allocation a = service("web-" + i);
            running.add(a);
            controller.reconcile(a);
        }
        for (Allocation a : running) {
            awaitStatus(a, ClientStatus.Running);
        }
        controller.shutdown();
        controllers.remove(controller);
        stubborn.relent();
        int starts = stubborn.starts();

        StoredLoad load = StoredLoad.begin(db);
        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());

        assertThat(next.restore(load)).isEqualTo(running.size());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> next.countByClientStatus().getOrDefault(ClientStatus.Running, 0) == running.size());
        assertThat(stubborn.starts()).as("every task reattached, none started").isEqualTo(starts);
        for (Allocation a : running) {
            next.reconcile(a);
        }
        assertThat(next.sweep(running)).as("all still in the API server").isZero();
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> stubborn.starts() == starts);
    }

    /** Its status was built from the reattached task before the API server answered: confirmed as it was, unwritten. */
    @Test
    void aReattachedAllocationConfirmedWithTheStatusItHadWritesNothing() throws Exception {
        Allocation a = service("web");
        controller.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        long[] seen = {-1};
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> {
                    long now = writer.writes();
                    boolean settled = now == seen[0];
                    seen[0] = now;
                    return settled;
                });
        controller.shutdown();
        controllers.remove(controller);
        long writes = writer.writes();

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        next.restore();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> next.countByClientStatus().getOrDefault(ClientStatus.Running, 0) == 1);
        Allocation fromApi = UnreadableAllocations.serialization().clone(a);
        fromApi.setStatus(
                UnreadableAllocations.serialization().clone(statuses.of(id(a)).orElseThrow()));
        next.reconcile(fromApi);

        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> writer.writes() == writes);
        assertThat(next.runner(id(a))).isPresent();
    }

    @Test
    void aTaskThatEndedWhileTheAgentWasAwayRestartsOnlyOnceTheApiServerConfirmsIt() throws Exception {
        Allocation a = service("web");
        runThenStopTheAgent(a);
        endsWhileTheAgentIsAway(id(a), "main");
        int starts = stubborn.starts();

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        next.restore();
        await().atMost(Duration.ofSeconds(10)).until(() -> terminatedSeen(id(a)));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> stubborn.starts() == starts);

        next.reconcile(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> stubborn.starts() == starts + 1);
        awaitStatus(a, ClientStatus.Running);
    }

    @Test
    void aTaskThatEndedWhileTheAgentWasAwayIsNotRestartedWhenTheApiServerNoLongerHasIt() throws Exception {
        Allocation a = service("web");
        runThenStopTheAgent(a);
        endsWhileTheAgentIsAway(id(a), "main");
        int starts = stubborn.starts();

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        next.restore();
        await().atMost(Duration.ofSeconds(10)).until(() -> terminatedSeen(id(a)));
        assertThat(next.sweep(List.of())).isEqualTo(1);

        assertThat(stubborn.starts()).isEqualTo(starts);
        assertThat(db.loadAll()).isEmpty();
        assertThat(next.size()).isZero();
    }

    /** An entry slipped into the store, for no allocation the API server has, whose stored task ran out. */
    @Test
    void aForgedStoreEntryTheApiServerDoesNotHaveNeverStartsATask() throws Exception {
        Allocation real = service("real");
        runThenStopTheAgent(real);
        int starts = stubborn.starts();
        AllocId forged = new AllocId("default", "forged");
        Allocation spec = service("forged");
        db.putAllocation(forged, spec);
        db.putTaskState(forged, "main", db.getTaskState(id(real), "main").orElseThrow());
        TaskLocalState local = db.getTaskLocalState(id(real), "main").orElseThrow();
        Map<String, String> handle = new HashMap<>(local.driverHandle());
        handle.put("@taskId", "forged-task");
        handle.put("runForNanos", "0");
        db.putTaskLocalState(forged, "main", local.withDriverHandle(handle));

        AllocationController next = controller(0, null, List.of(), UnaryOperator.identity());
        assertThat(next.restore()).isEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() -> terminatedSeen(forged));
        next.reconcile(real);
        assertThat(next.sweep(List.of(real))).isEqualTo(1);

        assertThat(stubborn.starts())
                .as("the real one reattached, the forged one never started")
                .isEqualTo(starts);
        assertThat(db.loadAll()).extracting(StoredAllocation::id).containsExactly(id(real));
        awaitStatus(real, ClientStatus.Running);
    }

    @Test
    void anUnreadableAllocationIsRefusedWithAConditionNamingTheField() throws Exception {
        Allocation a = UnreadableAllocations.serialization().unmarshal("""
                {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
                 "metadata": {"name": "odd", "namespace": "default", "uid": "uid-odd", "generation": 1},
                 "spec": {"nodeName": "node-a", "desiredStatus": "Sideways",
                          "tasks": [{"name": "main", "driver": "mock", "config": {}}]}}""", Allocation.class);

        controller.reconcile(a);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "SpecValid").isPresent());
        assertThat(statuses.condition(id(a), "SpecValid").orElseThrow().getStatus())
                .isEqualTo("False");
        assertThat(statuses.condition(id(a), "SpecValid").orElseThrow().getMessage())
                .contains("desiredStatus");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.reasons("odd").contains("FailedValidation"));
        assertThat(controller.runner(id(a))).as("nothing runs").isEmpty();
        assertThat(db.loadAll()).isEmpty();
    }

    /** A node with one GPU, from the fake device plugin. */
    DeviceLedger ledgerOfOneGpu() throws Exception {
        return ledgerOfGpus(1);
    }

    /** A node with {@code count} GPUs ({@code GPU-a}, {@code GPU-b}, ...), from the fake device plugin. */
    DeviceLedger ledgerOfGpus(int count) throws Exception {
        Path plugin = data.resolve("gpus.yaml");
        StringBuilder instances = new StringBuilder();
        for (int i = 0; i < count; i++) {
            instances.append("      - id: GPU-").append((char) ('a' + i)).append('\n');
        }
        Files.writeString(plugin, """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                """ + instances);
        devices = new DeviceManager(
                List.of(DevicePlugins.discover().select("fake:" + plugin)),
                new DeviceManager.Timing(
                        Duration.ofMillis(300),
                        Duration.ofMillis(100),
                        Duration.ofMillis(100),
                        Duration.ofMillis(50),
                        Duration.ofMillis(200)));
        assertThat(devices.awaitFirstFingerprints(Duration.ofSeconds(10))).isTrue();
        return new DeviceLedger(devices, db);
    }

    /** {@code a} with its first task asking for {@code count} NVIDIA GPUs. */
    static Allocation withGpus(Allocation a, int count) {
        Resources resources = a.getSpec().getTasks().getFirst().getResources();
        if (resources == null) {
            resources = new Resources();
            a.getSpec().getTasks().getFirst().setResources(resources);
        }
        resources.setDevices(List.of(new DeviceRequest("nvidia/gpu", count)));
        return a;
    }

    List<String> gpusOf(DeviceLedger ledger, Allocation a) {
        return ledger.reservations(id(a)).stream()
                .flatMap(r -> r.ids().stream())
                .toList();
    }

    @Test
    void devicesAreFreedOnlyOnceTheTasksHoldingThemAreDead() throws Exception {
        DeviceLedger ledger = ledgerOfOneGpu();
        AllocationController withDevices =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), UnaryOperator.identity());
        Allocation a = alloc("gpu", Map.of("runFor", "1h"));
        Resources resources = new Resources();
        resources.setDevices(List.of(new DeviceRequest("nvidia/gpu", 1)));
        a.getSpec().getTasks().getFirst().setResources(resources);
        withDevices.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        assertThat(ledger.reservations(id(a))).as("its task holds the GPU").hasSize(1);

        assertThat(withDevices.delete(a)).as("its task's kill keeps failing").isFalse();
        assertThat(ledger.reservations(id(a)))
                .as("still held: the task may still use it")
                .hasSize(1);

        stubborn.relent();
        await().atMost(Duration.ofSeconds(10)).until(() -> withDevices.delete(a));
        assertThat(ledger.reservations(id(a))).as("freed once the task is dead").isEmpty();
    }

    @Test
    void aFailedAllocationKeepsItsDevicesUntilTheSiblingHoldingThemIsDead() throws Exception {
        DeviceLedger ledger = ledgerOfOneGpu();
        AllocationController withDevices =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), UnaryOperator.identity());
        Allocation a = alloc("gpu", Map.of("runFor", "1h"));
        Resources resources = new Resources();
        resources.setDevices(List.of(new DeviceRequest("nvidia/gpu", 1)));
        a.getSpec().getTasks().getFirst().setResources(resources);
        Task failing = task("check", Map.of("runFor", "300ms", "exitCode", 1));
        a.getSpec().setTasks(List.of(a.getSpec().getTasks().getFirst(), failing));
        a.getSpec().setRestartPolicy(new RestartPolicy(0, "10m", "1s", RestartMode.Fail));

        withDevices.reconcile(a);

        awaitStatus(a, ClientStatus.Failed);
        assertThat(withDevices
                        .runner(id(a))
                        .orElseThrow()
                        .allocState()
                        .taskStates()
                        .get("main")
                        .getState())
                .as("its sibling's kill keeps failing")
                .isEqualTo(TaskState.State.Running);
        assertThat(ledger.reservations(id(a)))
                .as("still held: the dying task may still use the GPU")
                .hasSize(1);

        stubborn.relent();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ledger.reservations(id(a)).isEmpty());
    }

    @Test
    void aTerminalAllocationsStatusKeepsNamingItsDevicesWhichAreFreed() throws Exception {
        DeviceLedger ledger = ledgerOfOneGpu();
        AllocationController withDevices =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), UnaryOperator.identity());
        Allocation a = batch("gpu", "10ms");
        Resources resources = new Resources();
        resources.setDevices(List.of(new DeviceRequest("nvidia/gpu", 1)));
        a.getSpec().getTasks().getFirst().setResources(resources);

        withDevices.reconcile(a);

        awaitStatus(a, ClientStatus.Complete);
        assertThat(statuses.of(id(a)).orElseThrow().getAllocatedDevices())
                .as("what it ran with")
                .singleElement()
                .satisfies(d -> assertThat(d.getIds()).containsExactly("GPU-a"));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ledger.allocated(id(a)).isEmpty());
    }

    /**
     * A delete does not hold its reconciler thread (one of a few) for the destroy's whole deadline while its tasks
     * die: it answers "not yet" within a second and is looked at again, while the destroy goes on.
     */
    @Test
    void aDeleteWhoseTasksDieSlowlyHoldsNoReconcilerForTheDestroysDeadline() throws Exception {
        maxKillTimeout = Duration.ofSeconds(30); // a destroy waits up to a minute for its kills
        AllocationController slow = controller(0, null, List.of(), UnaryOperator.identity());
        Allocation a = alloc();
        slow.reconcile(a);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> slow.runner(ID)
                        .map(r -> r.allocState().clientStatus() == ClientStatus.Running)
                        .orElse(false));
        AllocationReconciler reconciler = new AllocationReconciler(slow, new Finalizer(new Finalizer.Api() {
            @Override
            public void patch(String namespace, String name, String jsonPatch) {}

            @Override
            public Allocation read(String namespace, String name) {
                throw new AssertionError("no read: the patch applies");
            }
        }));
        a.getMetadata().setFinalizers(List.of(AllocationReconciler.FINALIZER));
        a.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");

        long begin = System.nanoTime();
        UpdateControl<Allocation> first = reconciler.deleting(a);
        Duration held = Duration.ofNanos(System.nanoTime() - begin);
        assertThat(held).as("the reconciler's wait").isLessThan(Duration.ofSeconds(5));
        assertThat(first.getScheduleDelay())
                .as("looked at again soon")
                .hasValue(AllocationReconciler.CLEANUP_AGAIN.toMillis());

        stubborn.relent();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> reconciler.deleting(a).getScheduleDelay().isEmpty());
        assertThat(data.resolve("allocs/default/stuck")).doesNotExist();
    }

    @Test
    void aDeleteWhoseKillKeepsFailingKeepsTheFinalizerAndTheStateUntilTheTaskIsDead() throws Exception {
        Allocation a = alloc();
        controller.reconcile(a);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> controller
                        .runner(ID)
                        .map(r -> r.allocState().clientStatus() == ClientStatus.Running)
                        .orElse(false));
        List<String> patches = new CopyOnWriteArrayList<>();
        AllocationReconciler reconciler = new AllocationReconciler(controller, new Finalizer(new Finalizer.Api() {
            @Override
            public void patch(String namespace, String name, String jsonPatch) {
                patches.add(jsonPatch);
            }

            @Override
            public Allocation read(String namespace, String name) {
                throw new AssertionError("no read: the patch applies");
            }
        }));
        a.getMetadata().setFinalizers(List.of(AllocationReconciler.FINALIZER));
        a.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");

        UpdateControl<Allocation> first = reconciler.deleting(a);
        assertThat(patches)
                .as("the task may still be alive: the finalizer stays")
                .isEmpty();
        assertThat(first.getScheduleDelay()).isPresent();
        assertThat(stubborn.failedStops()).isPositive();
        assertThat(data.resolve("allocs/default/stuck")).exists();
        assertThat(db.loadAll())
                .singleElement()
                .satisfies(stored -> assertThat(stored.tasks()
                                .get("main")
                                .localState()
                                .orElseThrow()
                                .driverHandle())
                        .isNotNull());
        assertThat(reconciler.deleting(a).getScheduleDelay())
                .as("asked again: still alive")
                .isPresent();
        assertThat(patches).isEmpty();

        stubborn.relent();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> reconciler.deleting(a).getScheduleDelay().isEmpty());
        assertThat(patches)
                .as("the finalizer removed once the task is dead")
                .containsExactly(
                        "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\",\"value\":\"drover.dev/finalizer\"},"
                                + "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]");
        assertThat(data.resolve("allocs/default/stuck")).doesNotExist();
        assertThat(db.loadAll()).isEmpty();
    }

    /** {@code name}'s task runs for {@code runFor} and requests {@code cpuMillis} and {@code memoryMB}. */
    static Allocation asking(String name, String runFor, int cpuMillis, int memoryMB) {
        Allocation a = alloc(name, Map.of("runFor", runFor));
        Resources r = new Resources();
        r.setCpuMillis(cpuMillis);
        r.setMemoryMB(memoryMB);
        a.getSpec().getTasks().getFirst().setResources(r);
        return a;
    }

    AllocationController controllerFor(CpuMemory nodeAllocatable) {
        stubborn.relent(); // deletes kill at once
        allocatable = nodeAllocatable;
        return controller(0, null, List.of(), UnaryOperator.identity());
    }

    @Test
    void anAllocationNamingAHostVolumeTheAgentDoesNotHaveFailsAtOnceWithUnknownHostVolume() throws Exception {
        AllocationController c = controllerFor(new CpuMemory(4000, 1024));
        Allocation a = asking("wants-volume", "1h", 100, 64);
        a.getSpec().setVolumes(List.of(new dev.drover.api.v1alpha1.Volume("data", "datasets")));

        c.reconcile(a);

        awaitStatus(a, ClientStatus.Failed);
        var admitted = statuses.condition(id(a), "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).isEqualTo("False");
        assertThat(admitted.getReason()).isEqualTo("UnknownHostVolume");
        assertThat(admitted.getMessage())
                .isEqualTo("The node cannot give this allocation its volumes: volume \"data\" names host volume"
                        + " \"datasets\", which this node's agent does not have (it has none)");
        assertThat(c.runner(id(a))).as("never run").isEmpty();
        assertThat(admission.usage().requested()).isEqualTo(CpuMemory.ZERO);
    }

    @Test
    void anAllocationThatDoesNotFitFailsAtOnceWithOutOfmemoryAndNeverRuns() throws Exception {
        AllocationController c = controllerFor(new CpuMemory(4000, 1024));
        Allocation first = asking("first", "1h", 1000, 768);
        c.reconcile(first);
        awaitStatus(first, ClientStatus.Running);
        assertThat(statuses.condition(id(first), "Admitted").orElseThrow().getStatus())
                .isEqualTo("True");

        Allocation second = asking("second", "1h", 500, 512);
        c.reconcile(second);

        awaitStatus(second, ClientStatus.Failed);
        var admitted = statuses.condition(id(second), "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).isEqualTo("False");
        assertThat(admitted.getReason()).isEqualTo("OutOfmemory");
        assertThat(admitted.getMessage()).contains("requested 512 MB of memory, 256 free of 1024 allocatable");
        assertThat(statuses.condition(id(second), "Ready").orElseThrow().getReason())
                .isEqualTo("OutOfmemory");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.all().stream()
                        .anyMatch(e -> e.getReason().equals("OutOfmemory")
                                && e.getType().equals("Warning")
                                && e.getInvolvedObject().getName().equals("second")));
        assertThat(c.runner(id(second))).as("never run").isEmpty();
        assertThat(db.loadAll()).extracting(StoredAllocation::id).doesNotContain(id(second));
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(1000, 768));

        assertThat(c.delete(first)).isTrue();
        c.reconcile(nextGeneration(second)); // room now, but it failed for good
        assertThat(c.runner(id(second))).isEmpty();
        assertThat(statuses.clientStatus(id(second))).isEqualTo(ClientStatus.Failed);
    }

    @Test
    void cpuIsCheckedBesideMemoryAndAnExactFitIsAdmitted() throws Exception {
        AllocationController c = controllerFor(new CpuMemory(2000, 512));
        Allocation whole = asking("whole", "1h", 2000, 512);
        c.reconcile(whole);
        awaitStatus(whole, ClientStatus.Running);

        Allocation more = asking("more", "1h", 250, 0);
        c.reconcile(more);
        awaitStatus(more, ClientStatus.Failed);
        var admitted = statuses.condition(id(more), "Admitted").orElseThrow();
        assertThat(admitted.getReason()).isEqualTo("OutOfcpu");
        assertThat(admitted.getMessage())
                .contains("requested 250 millicores of CPU, 0 free of 2000 allocatable")
                .doesNotContain("memory");

        Allocation nothing = alloc("best-effort", Map.of("runFor", "1h"));
        c.reconcile(nothing);
        awaitStatus(nothing, ClientStatus.Running); // asks for nothing: fits a full node, as a Pod without requests
        assertThat(admission.refusals()).containsEntry("OutOfcpu", 1L);
    }

    @Test
    void aTerminalOrDeletedAllocationFreesItsShare() throws Exception {
        AllocationController c = controllerFor(new CpuMemory(1000, 512));
        Allocation job = asking("job", "100ms", 1000, 512);
        job.getSpec().setType(AllocationType.Batch);
        c.reconcile(job);
        awaitStatus(job, ClientStatus.Complete);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> admission.usage().requested().equals(CpuMemory.ZERO));

        Allocation next = asking("next", "1h", 1000, 512);
        c.reconcile(next);
        awaitStatus(next, ClientStatus.Running);
        assertThat(admission.usage().free()).isEqualTo(CpuMemory.ZERO);
        int changes = admissionChanges.get();

        assertThat(c.delete(next)).isTrue();
        assertThat(admission.usage().requested()).isEqualTo(CpuMemory.ZERO);
        assertThat(admissionChanges.get()).as("the Node's annotations are told").isGreaterThan(changes);
        Allocation after = asking("after", "1h", 1000, 512);
        c.reconcile(after);
        awaitStatus(after, ClientStatus.Running);
    }

    @Test
    void restoredAllocationsAreAdmittedBeforeNewOnesAndNeverRefused() throws Exception {
        Allocation a = asking("a", "1h", 100, 600);
        Allocation b = asking("b", "1h", 100, 600);
        controller.reconcile(a);
        controller.reconcile(b);
        awaitStatus(a, ClientStatus.Running);
        awaitStatus(b, ClientStatus.Running);
        controller.shutdown(); // the agent stops; its tasks keep running
        controllers.remove(controller);

        AllocationController next = controllerFor(new CpuMemory(4000, 1000)); // restarted with less memory
        assertThat(next.restore()).isEqualTo(2);
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(200, 1200));
        assertThat(admission.usage().free().memoryMB()).isEqualTo(-200);

        Allocation late = asking("late", "1h", 0, 1);
        next.reconcile(late);
        awaitStatus(late, ClientStatus.Failed);
        assertThat(statuses.condition(id(late), "Admitted").orElseThrow().getMessage())
                .contains("requested 1 MB of memory, 0 free of 1000 allocatable");

        next.reconcile(a);
        next.reconcile(b);
        assertThat(next.runner(id(a))).isPresent();
        assertThat(next.runner(id(b))).isPresent();
        assertThat(statuses.clientStatus(id(a))).isEqualTo(ClientStatus.Running);
    }

    /**
     * Three allocations asking one GPU each, created in that order, on a node with two: the first created is slow to
     * start (its runner is being created while the others come), yet it and the second get the GPUs and the third is
     * refused at admission, before anything of it starts.
     */
    @Test
    void devicesAreAdmittedWithCpuAndMemoryInTheOrderAllocationsComeNotAsTheyStart() throws Exception {
        DeviceLedger ledger = ledgerOfGpus(2);
        CountDownLatch firstCreating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AllocationController c =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), real -> new RunnerFactory() {
                    @Override
                    public AllocRunner create(Allocation a, AllocStateListener listener) {
                        if (a.getMetadata().getName().equals("first")) {
                            firstCreating.countDown();
                            try {
                                proceed.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        return real.create(a, listener);
                    }

                    @Override
                    public AllocRunner restore(StoredAllocation stored, AllocStateListener listener) {
                        return real.restore(stored, listener);
                    }
                });
        Allocation first = withGpus(alloc("first", Map.of("runFor", "1h")), 1);
        Allocation second = withGpus(alloc("second", Map.of("runFor", "1h")), 1);
        Allocation third = withGpus(alloc("third", Map.of("runFor", "1h")), 1);
        Thread slow = Thread.ofVirtual().start(() -> {
            try {
                c.reconcile(first);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(firstCreating.await(10, TimeUnit.SECONDS)).isTrue();
            c.reconcile(second);
            c.reconcile(third);
            awaitStatus(second, ClientStatus.Running);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> statuses.clientStatus(id(third)) != null
                            && statuses.clientStatus(id(third)) != ClientStatus.Pending);
        } finally {
            proceed.countDown();
            slow.join();
        }

        awaitStatus(first, ClientStatus.Running);
        assertThat(gpusOf(ledger, first)).as("reserved when it was admitted").containsExactly("GPU-a");
        assertThat(gpusOf(ledger, second)).containsExactly("GPU-b");
        assertThat(statuses.clientStatus(id(third))).isEqualTo(ClientStatus.Failed);
        var admitted = statuses.condition(id(third), "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).isEqualTo("False");
        assertThat(admitted.getReason()).isEqualTo("OutOfdevices");
        assertThat(admitted.getMessage())
                .isEqualTo("The node cannot fit this allocation: device nvidia/gpu: asked 1, 0" + " free");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.all().stream()
                        .anyMatch(e -> e.getReason().equals("OutOfdevices")
                                && e.getType().equals("Warning")
                                && e.getInvolvedObject().getName().equals("third")));
        assertThat(c.runner(id(third))).as("never run").isEmpty();
        assertThat(gpusOf(ledger, third)).isEmpty();
        assertThat(recorded.all()).noneMatch(e -> e.getReason().equals("SetupFailure"));
    }

    @Test
    void anAgentWithoutDevicePluginsRefusesAnAllocationAskingForDevicesAtAdmission() throws Exception {
        Allocation a = withGpus(alloc("gpu", Map.of("runFor", "1h")), 2);

        controller.reconcile(a);

        awaitStatus(a, ClientStatus.Failed);
        var admitted = statuses.condition(id(a), "Admitted").orElseThrow();
        assertThat(admitted.getReason()).isEqualTo("OutOfdevices");
        assertThat(admitted.getMessage())
                .isEqualTo("The node cannot fit this allocation: device nvidia/gpu: asked 2, 0 free (this agent runs no"
                        + " device plugins; see --device-plugin in docs/configuration.md)");
        assertThat(controller.runner(id(a))).isEmpty();
    }

    @Test
    void restoredAllocationsKeepTheirDevicesAndNewOnesAreRefusedThem() throws Exception {
        DeviceLedger ledger = ledgerOfOneGpu();
        AllocationController before =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), UnaryOperator.identity());
        Allocation a = withGpus(alloc("gpu", Map.of("runFor", "1h")), 1);
        before.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        before.shutdown(); // the agent stops; its task keeps running
        controllers.remove(before);

        DeviceLedger again = new DeviceLedger(devices, db);
        AllocationController after =
                controller(0, again, List.of(new DeviceReservationHook(again, devices)), UnaryOperator.identity());
        assertThat(after.restore()).isEqualTo(1);
        assertThat(gpusOf(again, a)).containsExactly("GPU-a");

        Allocation late = withGpus(alloc("late", Map.of("runFor", "1h")), 1);
        after.reconcile(late);
        awaitStatus(late, ClientStatus.Failed);
        assertThat(statuses.condition(id(late), "Admitted").orElseThrow().getReason())
                .isEqualTo("OutOfdevices");

        after.reconcile(a);
        assertThat(after.runner(id(a))).isPresent();
        assertThat(gpusOf(again, a)).as("confirmed: the same GPU").containsExactly("GPU-a");
    }

    @Test
    void anUpdateThatDoesNotFitIsRefusedForItsGenerationAndTheRunningDefinitionKept() throws Exception {
        AllocationController c = controllerFor(new CpuMemory(4000, 1024));
        Allocation a = asking("grower", "1h", 1000, 100);
        c.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        AllocRunner runner = c.runner(id(a)).orElseThrow();

        Allocation huge = nextGeneration(a);
        huge.getSpec().getTasks().getFirst().getResources().setCpuMillis(1_000_000);
        huge.getSpec().getTasks().getFirst().getResources().setMemoryMB(10_000_000); // 10 TB
        c.reconcile(huge);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "Admitted")
                        .map(x -> x.getStatus().equals("False"))
                        .orElse(false));
        var admitted = statuses.condition(id(a), "Admitted").orElseThrow();
        assertThat(admitted.getReason()).isEqualTo("OutOfcpu");
        assertThat(admitted.getObservedGeneration()).isEqualTo(2L);
        assertThat(admitted.getMessage())
                .startsWith("The node cannot fit the allocation's new requests, so it runs on as it was: requested"
                        + " 1000000 millicores of CPU, 4000 free of 4000 allocatable");
        assertThat(statuses.of(id(a)).orElseThrow().getObservedGeneration()).isEqualTo(2L);
        assertThat(statuses.clientStatus(id(a))).isEqualTo(ClientStatus.Running);
        assertThat(c.runner(id(a))).containsSame(runner);
        assertThat(runner.alloc().getSpec().getTasks().getFirst().getResources().getCpuMillis())
                .as("the running definition kept")
                .isEqualTo(1000);
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(1000, 100));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> recorded.all().stream()
                        .anyMatch(e -> e.getReason().equals("OutOfcpu")
                                && e.getType().equals("Warning")
                                && e.getInvolvedObject().getName().equals("grower")));

        Allocation other = asking("other", "1h", 3000, 924);
        c.reconcile(other);
        awaitStatus(other, ClientStatus.Running); // the rest of the node is still free

        Allocation smaller = nextGeneration(huge);
        smaller.getSpec().getTasks().getFirst().getResources().setCpuMillis(500);
        smaller.getSpec().getTasks().getFirst().getResources().setMemoryMB(50);
        c.reconcile(smaller);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "Admitted")
                        .map(x -> x.getStatus().equals("True") && x.getObservedGeneration() == 3L)
                        .orElse(false));
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(3500, 974));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> runner.alloc()
                                .getSpec()
                                .getTasks()
                                .getFirst()
                                .getResources()
                                .getCpuMillis()
                        == 500);
    }

    @Test
    void anUpdateAskingForMoreGpusGetsThemWhenFreeAndIsRefusedWithOutOfdevicesWhenNot() throws Exception {
        DeviceLedger ledger = ledgerOfGpus(2);
        AllocationController c =
                controller(0, ledger, List.of(new DeviceReservationHook(ledger, devices)), UnaryOperator.identity());
        Allocation a = withGpus(alloc("trainer", Map.of("runFor", "1h")), 1);
        c.reconcile(a);
        awaitStatus(a, ClientStatus.Running);
        assertThat(gpusOf(ledger, a)).containsExactly("GPU-a");

        Allocation two = withGpus(nextGeneration(a), 2);
        c.reconcile(two);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.of(id(a))
                        .map(s -> Long.valueOf(2).equals(s.getObservedGeneration()))
                        .orElse(false));
        assertThat(gpusOf(ledger, a)).as("its own GPU kept, one added").containsExactly("GPU-a", "GPU-b");

        Allocation late = withGpus(alloc("late", Map.of("runFor", "1h")), 1);
        c.reconcile(late);
        awaitStatus(late, ClientStatus.Failed);
        assertThat(statuses.condition(id(late), "Admitted").orElseThrow().getReason())
                .isEqualTo("OutOfdevices");

        Allocation three = withGpus(nextGeneration(two), 3);
        c.reconcile(three);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.condition(id(a), "Admitted")
                        .map(x -> x.getStatus().equals("False"))
                        .orElse(false));
        assertThat(statuses.condition(id(a), "Admitted").orElseThrow().getMessage())
                .endsWith("device nvidia/gpu: asked 3, 2 free");
        assertThat(gpusOf(ledger, a)).as("what it holds, kept").containsExactly("GPU-a", "GPU-b");
        assertThat(statuses.clientStatus(id(a))).isEqualTo(ClientStatus.Running);
    }

    /**
     * A controller that takes one allocation on at a time, whose runner for {@code blocker} is held in its creation
     * (telling {@code creating}) until {@code proceed}: what comes meanwhile is admitted and waits for the slot.
     */
    AllocationController oneAtATime(
            DeviceLedger ledger, String blocker, CountDownLatch creating, CountDownLatch proceed) {
        List<TaskPrestartHook> hooks = ledger == null ? List.of() : List.of(new DeviceReservationHook(ledger, devices));
        return controller(1, ledger, hooks, real -> new RunnerFactory() {
            @Override
            public AllocRunner create(Allocation a, AllocStateListener listener) {
                created.add(a.getMetadata().getName());
                if (a.getMetadata().getName().equals(blocker)) {
                    creating.countDown();
                    try {
                        proceed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return real.create(a, listener);
            }

            @Override
            public AllocRunner restore(StoredAllocation stored, AllocStateListener listener) {
                return real.restore(stored, listener);
            }
        });
    }

    static Thread reconcileInBackground(AllocationController c, Allocation a) {
        return Thread.ofVirtual().start(() -> {
            try {
                c.reconcile(a);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @Test
    void aSpecUpdatedBeforeItStartsIsAdmittedAgainAndGetsTheGpusItNowAsks() throws Exception {
        DeviceLedger ledger = ledgerOfGpus(2);
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AllocationController c = oneAtATime(ledger, "blocker", creating, proceed);
        Thread slow = reconcileInBackground(c, alloc("blocker", Map.of("runFor", "1h")));
        Allocation a = withGpus(alloc("trainer", Map.of("runFor", "1h")), 1);
        try {
            assertThat(creating.await(10, TimeUnit.SECONDS)).isTrue();
            c.reconcile(a);
            assertThat(c.waitingToStart()).as("admitted, waiting for the slot").isEqualTo(1);
            assertThat(gpusOf(ledger, a)).containsExactly("GPU-a");

            c.reconcile(withGpus(nextGeneration(a), 2));

            assertThat(gpusOf(ledger, a)).as("admitted again").containsExactly("GPU-a", "GPU-b");
        } finally {
            proceed.countDown();
            slow.join();
        }
        awaitStatus(a, ClientStatus.Running);
        AllocRunner runner = c.runner(id(a)).orElseThrow();
        assertThat(runner.alloc().getMetadata().getGeneration())
                .as("the newer spec starts")
                .isEqualTo(2L);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.of(id(a))
                        .map(s -> s.getAllocatedDevices() != null
                                && s.getAllocatedDevices().size() == 1
                                && s.getAllocatedDevices().getFirst().getIds().equals(List.of("GPU-a", "GPU-b")))
                        .orElse(false));
        var admitted = statuses.condition(id(a), "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).isEqualTo("True");
        assertThat(admitted.getObservedGeneration()).isEqualTo(2L);
        assertThat(recorded.all()).noneMatch(e -> e.getReason().equals("SetupFailure"));
    }

    /**
     * An update that comes while the runner of the copy admitted before is being created keeps that copy's devices
     * until it runs (its tasks start with what they were given), then is admitted as an update.
     */
    @Test
    void aSpecUpdatedWhileItsRunnerIsCreatedIsAdmittedOnceItRuns() throws Exception {
        DeviceLedger ledger = ledgerOfGpus(2);
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AllocationController c = oneAtATime(ledger, "trainer", creating, proceed);
        Allocation a = withGpus(alloc("trainer", Map.of("runFor", "1h")), 1);
        Thread slow = reconcileInBackground(c, a);
        try {
            assertThat(creating.await(10, TimeUnit.SECONDS)).isTrue();

            c.reconcile(withGpus(nextGeneration(a), 2));

            assertThat(gpusOf(ledger, a)).as("while its runner is created").containsExactly("GPU-a");
        } finally {
            proceed.countDown();
            slow.join();
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> c.runner(id(a))
                        .map(r -> r.alloc().getMetadata().getGeneration() == 2L)
                        .orElse(false));
        assertThat(gpusOf(ledger, a)).containsExactly("GPU-a", "GPU-b");
        awaitStatus(a, ClientStatus.Running);
        assertThat(recorded.all()).noneMatch(e -> e.getReason().equals("SetupFailure"));
    }

    @Test
    void aSpecUpdatedBeforeItStartsThatNoLongerFitsIsRefusedAndTheAdmittedCopyStarts() throws Exception {
        stubborn.relent();
        allocatable = new CpuMemory(4000, 1024);
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AllocationController c = oneAtATime(null, "blocker", creating, proceed);
        Thread slow = reconcileInBackground(c, asking("blocker", "1h", 1000, 512));
        Allocation a = asking("grower", "1h", 1000, 256);
        try {
            assertThat(creating.await(10, TimeUnit.SECONDS)).isTrue();
            c.reconcile(a);
            assertThat(c.waitingToStart()).as("admitted, waiting for the slot").isEqualTo(1);

            Allocation huge = nextGeneration(a);
            huge.getSpec().getTasks().getFirst().getResources().setMemoryMB(10_000_000);
            c.reconcile(huge);

            await().atMost(Duration.ofSeconds(10))
                    .until(() -> statuses.condition(id(a), "Admitted")
                            .map(x -> x.getStatus().equals("False"))
                            .orElse(false));
            var refused = statuses.condition(id(a), "Admitted").orElseThrow();
            assertThat(refused.getReason()).isEqualTo("OutOfmemory");
            assertThat(refused.getObservedGeneration()).isEqualTo(2L);
            assertThat(refused.getMessage())
                    .isEqualTo("The node cannot fit the allocation's new requests, so it runs on as it was: requested"
                            + " 10000000 MB of memory, 512 free of 1024 allocatable");
            assertThat(statuses.clientStatus(id(a))).as("not started yet").isEqualTo(ClientStatus.Pending);
            assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(2000, 768));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> recorded.all().stream()
                            .anyMatch(e -> e.getReason().equals("OutOfmemory")
                                    && e.getType().equals("Warning")
                                    && e.getInvolvedObject().getName().equals("grower")));
        } finally {
            proceed.countDown();
            slow.join();
        }
        awaitStatus(a, ClientStatus.Running);
        AllocRunner runner = c.runner(id(a)).orElseThrow();
        assertThat(runner.alloc().getMetadata().getGeneration())
                .as("the admitted copy")
                .isEqualTo(1L);
        assertThat(runner.alloc().getSpec().getTasks().getFirst().getResources().getMemoryMB())
                .isEqualTo(256);
        var admitted = statuses.condition(id(a), "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).as("still refused for generation 2").isEqualTo("False");
        assertThat(admitted.getObservedGeneration()).isEqualTo(2L);
        assertThat(statuses.of(id(a)).orElseThrow().getObservedGeneration()).isEqualTo(2L);
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(2000, 768));
    }

    /**
     * A copy admitted while the allocation's start slot frees up and its start runs to the end (the controller saw
     * no runner when it came): it is an update of the runner that started, applied to it, and the allocation gets no
     * second runner. Before, it was queued as if nothing had started: with the slot free it was started again (two
     * runners for one allocation), else it waited, never applied, until the next change.
     */
    @Test
    void aSpecUpdatedAsItsStartFinishesIsAppliedToItsOneRunner() throws Exception {
        stubborn.relent();
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AllocationController c = oneAtATime(null, "blocker", creating, proceed);
        Thread slow = reconcileInBackground(c, asking("blocker", "1h", 1000, 100));
        Allocation a = asking("grower", "1h", 1000, 100);
        AtomicReference<AllocRunner> started = new AtomicReference<>();
        try {
            assertThat(creating.await(10, TimeUnit.SECONDS)).isTrue();
            c.reconcile(a);
            assertThat(c.waitingToStart()).as("admitted, waiting for the slot").isEqualTo(1);
            Allocation bigger = nextGeneration(a);
            bigger.getSpec().getTasks().getFirst().getResources().setCpuMillis(2000);
            AtomicBoolean once = new AtomicBoolean();
            onAdmissionChange = () -> { // the newer copy is admitted: meanwhile the slot frees up and it starts
                if (once.compareAndSet(false, true)) {
                    proceed.countDown();
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> statuses.clientStatus(id(a)) == ClientStatus.Running);
                    started.set(c.runner(id(a)).orElseThrow());
                }
            };

            c.reconcile(bigger);
        } finally {
            proceed.countDown();
            slow.join();
        }
        assertThat(started.get())
                .as("started while the newer copy was admitted")
                .isNotNull();
        assertThat(created).as("one runner each").containsExactly("blocker", "grower");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> started.get().alloc().getMetadata().getGeneration() == 2L);
        assertThat(started.get()
                        .alloc()
                        .getSpec()
                        .getTasks()
                        .getFirst()
                        .getResources()
                        .getCpuMillis())
                .isEqualTo(2000);
        assertThat(c.runner(id(a))).containsSame(started.get());
        assertThat(admission.usage().requested()).isEqualTo(new CpuMemory(3000, 200));
    }
}
