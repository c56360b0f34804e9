package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;
import dev.drover.controller.events.EventPoster;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.status.StatusPatcher;
import dev.drover.controller.status.StatusWriter;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.mock.MockDriver;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.gc.DiskUsage;
import dev.drover.gc.GarbageCollector;
import dev.drover.gc.GcPolicy;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.AllocId;
import dev.drover.state.FailingKvStore;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's side of a state store that cannot write (a full disk) or holds an entry it cannot read: storage
 * trouble is transient and reported as such, never a spec error, and nothing runs twice.
 */
class StoreFailureControllerTest {

    static final String NODE = "node-a";

    @TempDir
    Path data;

    final MockApi api = newApi();
    final KubernetesClient client = api.client();
    final List<AutoCloseable> open = new ArrayList<>();
    StatusWriter writer;
    EventRecorder events;
    GarbageCollector gc;
    AllocationController controller;

    static MockApi newApi() {
        try {
            return new MockApi();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        if (controller != null) {
            controller.shutdown();
        }
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
        api.close();
        endTasksStartedHere();
    }

    /**
     * raw_exec tasks outlive an agent by design, so a test that fails midway would leave its {@code sleep} tasks
     * behind: end every process whose command line names this test's own data directory (its supervisors) and what
     * they started (the tasks), by PID, and no other.
     */
    private void endTasksStartedHere() throws InterruptedException {
        List<ProcessHandle> ours = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().orElse("").contains(data.toString()))
                .flatMap(p -> java.util.stream.Stream.concat(p.descendants(), java.util.stream.Stream.of(p)))
                .distinct()
                .toList();
        ours.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle p : ours) {
            p.onExit()
                    .orTimeout(10, java.util.concurrent.TimeUnit.SECONDS)
                    .exceptionally(t -> p)
                    .join();
        }
    }

    /** A raw_exec driver (and its log rotator), closed after the test. */
    RawExecDriver rawExec() {
        LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
        RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator);
        open.add(rotator);
        open.add(driver);
        return driver;
    }

    /**
     * The agent stops as it does on SIGTERM (raw_exec tasks keep running), its store closed; then the stored spec of
     * allocation svc is torn, as a disk error would.
     */
    void stopAgentAndTearTheSpecOfSvc(StateDB db) throws Exception {
        controller.shutdown();
        controller = null;
        for (AutoCloseable c : List.of(writer, events, gc)) {
            c.close();
            open.remove(c);
        }
        db.close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + data.resolve("state.db"));
                PreparedStatement tear = c.prepareStatement(
                        "UPDATE kv SET value = X'7B22' WHERE bucket = 'alloc' AND key = 'default/svc'")) {
            assertThat(tear.executeUpdate()).isEqualTo(1);
        }
    }

    AllocationController controller(StateDB db, Driver driver) {
        writer = new StatusWriter(
                new StatusPatcher(client),
                new StatusWriter.Timing(
                        Duration.ofMillis(20), Duration.ofSeconds(2), Duration.ofMillis(20), Duration.ofSeconds(1)));
        events = new EventRecorder(new EventPoster(client), NODE);
        gc = new GarbageCollector(GcPolicy.DEFAULT, DiskUsage.of(data));
        open.addAll(List.of(writer, events, gc));
        DroverMetrics metrics = new DroverMetrics(
                new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3], () -> new long[5], () -> new long[3]));
        DriverRegistry drivers = new DriverRegistry(List.of(driver));
        return new AllocationController(
                NODE,
                new AllocRunnerConfig(
                        data,
                        new TaskRunnerConfig.Shared(
                                drivers,
                                db,
                                Clock.systemUTC(),
                                new SplittableRandom(1),
                                Duration.ofSeconds(5),
                                TaskRunnerConfig.DEFAULT_DRIVER_DEADLINE,
                                TaskRunnerConfig.StopRetry.DEFAULT),
                        List.of(),
                        List.of()),
                PreviousAllocations.NONE,
                writer,
                events,
                metrics,
                gc,
                null,
                0,
                new Admissions(new NodeAdmission(new CpuMemory(64_000, 1 << 20)), null, () -> {}));
    }

    Allocation create(String name, String driver, Map<String, Object> config) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(NODE);
        Task t = new Task();
        t.setName("main");
        t.setDriver(driver);
        t.setConfig(config);
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return client.resource(a).create();
    }

    Allocation get(String name) {
        return client.resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    ClientStatus clientStatus(String name) {
        Allocation a = get(name);
        return a.getStatus() == null ? null : a.getStatus().getClientStatus();
    }

    Optional<Condition> condition(String name, String type) {
        Allocation a = get(name);
        return a.getStatus() == null
                ? Optional.empty()
                : a.getStatus().getConditions().stream()
                        .filter(c -> type.equals(c.getType()))
                        .findFirst();
    }

    List<String> eventReasons() {
        return client.v1().events().inNamespace("default").list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }

    MockDriver mock() {
        MockDriver mock = new MockDriver(Clock.systemUTC());
        open.add(mock);
        return mock;
    }

    @Test
    void anAllocationTakenOnWhileTheStoreFailsIsNotRefusedAndRunsOnceItRecovers() throws Exception {
        FailingKvStore kv = FailingKvStore.inMemory();
        StateDB db = kv.stateDB(Duration.ofMillis(20));
        open.add(db);
        controller = controller(db, mock());
        Allocation web = create("web", "mock", Map.of("runFor", "1h"));
        kv.fail();

        controller.reconcile(web);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "StateStored").isPresent());
        assertThat(clientStatus("web")).isEqualTo(ClientStatus.Pending);
        assertThat(condition("web", "StateStored").orElseThrow().getStatus()).isEqualTo("False");
        assertThat(condition("web", "StateStored").orElseThrow().getMessage()).contains("SQLITE_FULL");
        assertThat(condition("web", "SpecValid")).as("not a spec error").isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> eventReasons().contains("StateStoreFailed"));

        kv.recover();

        await().atMost(Duration.ofSeconds(10)).until(() -> clientStatus("web") == ClientStatus.Running);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "StateStored")
                        .map(c -> c.getStatus().equals("True"))
                        .orElse(false));
        assertThat(condition("web", "SpecValid").orElseThrow().getStatus()).isEqualTo("True");
    }

    /**
     * An update the node cannot fit, refused while the copy admitted before waits for the store: once the store
     * writes again, that copy starts and the update stays refused (Admitted=False for its generation). Before, the
     * older copy was taken on again as if new, which cleared the refusal until the update was delivered again.
     */
    @Test
    void anUpdateRefusedWhileTheStoreFailsStaysRefusedOnceTheStoreRecovers() throws Exception {
        FailingKvStore kv = FailingKvStore.inMemory();
        StateDB db = kv.stateDB(Duration.ofMillis(20));
        open.add(db);
        controller = controller(db, mock());
        Allocation web = create("web", "mock", Map.of("runFor", "1h"));
        kv.fail();
        controller.reconcile(web);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "StateStored").isPresent());

        Allocation huge = get("web");
        Resources r = new Resources();
        r.setMemoryMB(10_000_000); // 10 TB
        huge.getSpec().getTasks().getFirst().setResources(r);
        huge = client.resource(huge).update();
        assertThat(huge.getMetadata().getGeneration()).isEqualTo(2L);
        controller.reconcile(huge);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "Admitted")
                        .map(c -> c.getStatus().equals("False"))
                        .orElse(false));

        kv.recover();

        await().atMost(Duration.ofSeconds(10)).until(() -> clientStatus("web") == ClientStatus.Running);
        assertThat(controller
                        .runner(new AllocId("default", "web"))
                        .orElseThrow()
                        .alloc()
                        .getMetadata()
                        .getGeneration())
                .as("the copy admitted before")
                .isEqualTo(1L);
        Condition admitted = condition("web", "Admitted").orElseThrow();
        assertThat(admitted.getStatus()).as("the update still refused").isEqualTo("False");
        assertThat(admitted.getReason()).isEqualTo("OutOfmemory");
        assertThat(admitted.getObservedGeneration()).isEqualTo(2L);
    }

    @Test
    void aRunningAllocationReportsStateStoredFalseWhileItsStateCannotBeWritten() throws Exception {
        FailingKvStore kv = FailingKvStore.inMemory();
        StateDB db = kv.stateDB(Duration.ofMillis(20));
        open.add(db);
        controller = controller(db, mock());
        Allocation web = create("web", "mock", Map.of("runFor", "1h"));
        controller.reconcile(web);
        await().atMost(Duration.ofSeconds(10)).until(() -> clientStatus("web") == ClientStatus.Running);
        kv.fail();

        controller
                .runner(new AllocId("default", "web"))
                .orElseThrow()
                .taskRunners()
                .get("main")
                .restart("test");

        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "StateStored")
                        .map(c -> c.getStatus().equals("False"))
                        .orElse(false));
        assertThat(controller
                        .runner(new AllocId("default", "web"))
                        .orElseThrow()
                        .taskRunners()
                        .get("main")
                        .done())
                .isNotDone();
        kv.recover();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> condition("web", "StateStored")
                        .map(c -> c.getStatus().equals("True"))
                        .orElse(false));
        assertThat(clientStatus("web")).isEqualTo(ClientStatus.Running);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> eventReasons().containsAll(List.of("StateStoreFailed", "StateStored")));
    }

    @Test
    void aDeleteWhileTheStoreFailsCompletesAndTheStoreDeletesLater() throws Exception {
        FailingKvStore kv = FailingKvStore.inMemory();
        StateDB db = kv.stateDB(Duration.ofMillis(20));
        open.add(db);
        controller = controller(db, mock());
        Allocation web = create("web", "mock", Map.of("runFor", "1h"));
        controller.reconcile(web);
        await().atMost(Duration.ofSeconds(10)).until(() -> clientStatus("web") == ClientStatus.Running);
        kv.fail();

        controller.delete(web);

        assertThat(controller.size()).isZero();
        assertThat(data.resolve("allocs/default/web")).doesNotExist();
        assertThat(db.loadAll()).as("not deleted yet: the store cannot write").isNotEmpty();
        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> db.loadAll().isEmpty());
    }

    @Test
    void aLeftoverDirectoryIsSweptAtStartAndAListedOneKept() throws Exception {
        StateDB db = StateStores.inMemory();
        open.add(db);
        controller = controller(db, mock());
        Files.createDirectories(data.resolve("allocs/default/ghost/alloc/data"));
        Files.writeString(data.resolve("allocs/default/ghost/alloc/data/x"), "left behind");
        Files.createDirectories(data.resolve("allocs/default/kept/alloc"));
        Allocation kept = create("kept", "mock", Map.of("runFor", "1h"));

        controller.restore();
        controller.sweep(List.of(kept));

        assertThat(data.resolve("allocs/default/ghost")).doesNotExist();
        assertThat(data.resolve("allocs/default/kept")).exists();
    }

    /**
     * An allocation whose stored spec cannot be read, deleted from the API server while the agent was away: its
     * directory and state were removed and its raw_exec task ran on for good, untracked. Its task is ended first now.
     */
    @Test
    void anUnrestorableAllocationGoneFromTheApiServerHasItsTaskEndedBeforeItsDirectoryGoes() throws Exception {
        RawExecDriver driver = rawExec();
        AllocId id = new AllocId("default", "svc");
        StateDB first = StateStores.open(data);
        controller = controller(first, driver);
        controller.reconcile(create("svc", "raw_exec", Map.of("command", "/bin/sleep", "args", List.of("1000"))));
        await().atMost(Duration.ofSeconds(20)).until(() -> clientStatus("svc") == ClientStatus.Running);
        long pid = Long.parseLong(
                first.getTaskLocalState(id, "main").orElseThrow().driverHandle().get("pid"));
        stopAgentAndTearTheSpecOfSvc(first); // its tasks keep running

        StateDB second = StateStores.open(data);
        open.add(second);
        RawExecDriver nextAgents = rawExec(); // knows the task by its handle only
        controller = controller(second, nextAgents);
        assertThat(controller.restore()).isZero();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);
        controller.sweep(List.of()); // the API server no longer has it

        await().atMost(Duration.ofSeconds(20))
                .until(() -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
        assertThat(data.resolve("allocs/default/svc")).doesNotExist();
        assertThat(second.getTaskLocalState(id, "main")).isEmpty();
    }

    @Test
    void anUnreadableSpecEntryStopsNothingAndItsRawExecTaskIsTakenOverNotStartedTwice() throws Exception {
        RawExecDriver driver = rawExec();
        AllocId id = new AllocId("default", "svc");
        StateDB first = StateStores.open(data);
        controller = controller(first, driver);
        AllocId otherId = new AllocId("default", "other");
        Allocation svc = create("svc", "raw_exec", Map.of("command", "/bin/sleep", "args", List.of("1000")));
        Allocation other = create("other", "raw_exec", Map.of("command", "/bin/sleep", "args", List.of("1001")));
        controller.reconcile(svc);
        controller.reconcile(other);
        await().atMost(Duration.ofSeconds(20))
                .until(() ->
                        clientStatus("svc") == ClientStatus.Running && clientStatus("other") == ClientStatus.Running);
        String pid =
                first.getTaskLocalState(id, "main").orElseThrow().driverHandle().get("pid");
        String otherPid = first.getTaskLocalState(otherId, "main")
                .orElseThrow()
                .driverHandle()
                .get("pid");
        stopAgentAndTearTheSpecOfSvc(first); // its tasks keep running

        StateDB second = StateStores.open(data);
        open.add(second);
        controller = controller(second, driver);
        assertThat(controller.restore())
                .as("the other is restored; the damaged one is taken on from the API server")
                .isEqualTo(1);
        assertThat(second.stats().quarantined()).isEqualTo(1);
        controller.sweep(List.of(get("svc"), get("other")));
        controller.reconcile(get("svc"));
        controller.reconcile(get("other"));
        assertThat(controller
                        .runner(otherId)
                        .orElseThrow()
                        .allocState()
                        .taskStates()
                        .get("main")
                        .getRestarts())
                .isZero();
        assertThat(second.getTaskLocalState(otherId, "main")
                        .orElseThrow()
                        .driverHandle()
                        .get("pid"))
                .as("reattached")
                .isEqualTo(otherPid);

        await().atMost(Duration.ofSeconds(20))
                .until(() -> second.getTaskLocalState(id, "main")
                        .map(l -> l.driverHandle() != null)
                        .orElse(false));
        assertThat(second.getTaskLocalState(id, "main")
                        .orElseThrow()
                        .driverHandle()
                        .get("pid"))
                .as("the running process is taken over")
                .isEqualTo(pid);
        assertThat(ProcessHandle.allProcesses()
                        .filter(p -> p.info().commandLine().orElse("").contains("sleep 1000")
                                && p.info().commandLine().orElse("").contains(data.toString()))
                        .count())
                .as("its supervisor, and no second one")
                .isEqualTo(1);
        controller.delete(get("svc"));
        controller.delete(get("other"));
        for (String p : List.of(pid, otherPid)) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> ProcessHandle.of(Long.parseLong(p))
                            .map(h -> !h.isAlive())
                            .orElse(true));
        }
    }
}
