package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.EnvVar;
import dev.drover.api.v1alpha1.TaskState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The behaviour every {@link StateDB} shares; subclasses supply the store. */
abstract class StateDBContractTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final AllocId WEB = new AllocId("default", "web");
    static final AllocId WEB2 = new AllocId("default", "web-2");

    StateDB db;

    abstract StateDB openStore() throws Exception;

    @BeforeEach
    void open() throws Exception {
        db = openStore();
    }

    @AfterEach
    void closeStore() {
        db.close();
    }

    /** An allocation whose spec is {@code specJson} (single quotes for double). */
    static Allocation spec(String specJson) {
        return read("{'spec':" + specJson + "}", Allocation.class);
    }

    static TaskState taskState(String json) {
        return read(json, TaskState.class);
    }

    private static <T> T read(String json, Class<T> type) {
        try {
            return JSON.readValue(json.replace('\'', '"'), type);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void everyKindOfEntryReadsBackAsWritten() {
        Allocation spec = spec("{'nodeName':'node-1','tasks':[{'name':'main','driver':'mock'}]}");
        AllocRunnerState allocState = new AllocRunnerState("Running", "Tasks are running", 3L);
        TaskLocalState local = TaskLocalState.initial("raw_exec")
                .withDriverHandle(Map.of("pid", "4242", "startTicks", "99"))
                .withHookDone("artifacts");
        TaskState taskState = taskState("{'state':'Running','failed':false,'restarts':0}");
        List<DeviceReservation> devices =
                List.of(new DeviceReservation("main", "nvidia", "gpu", "A100", List.of("GPU-1")));

        db.putAllocation(WEB, spec);
        db.putAllocRunnerState(WEB, allocState);
        db.putTaskLocalState(WEB, "main", local);
        db.putTaskState(WEB, "main", taskState);
        db.putDeviceReservations(WEB, devices);
        db.putPorts(WEB, Map.of("http", 20000, "admin", 8080));
        db.putNetwork(WEB, "{\"mode\":\"bridge\"}");

        assertThat(db.getAllocation(WEB)).contains(spec);
        assertThat(db.getPorts(WEB)).contains(Map.of("http", 20000, "admin", 8080));
        assertThat(db.getNetwork(WEB)).contains("{\"mode\":\"bridge\"}");
        StoredAllocation stored = db.loadAll().getFirst();
        assertThat(stored.ports()).isEqualTo(Map.of("http", 20000, "admin", 8080));
        assertThat(stored.network()).contains("{\"mode\":\"bridge\"}");
        assertThat(db.getAllocRunnerState(WEB)).contains(allocState);
        assertThat(db.getTaskLocalState(WEB, "main")).contains(local);
        assertThat(db.getTaskState(WEB, "main")).contains(taskState);
        assertThat(db.getDeviceReservations(WEB)).contains(devices);
    }

    @Test
    void absentEntriesReadAsEmptyNotAsDefaults() {
        assertThat(db.getAllocation(WEB)).isEmpty();
        assertThat(db.getAllocRunnerState(WEB)).isEmpty();
        assertThat(db.getTaskLocalState(WEB, "main")).isEmpty();
        assertThat(db.getTaskState(WEB, "main")).isEmpty();
        assertThat(db.getDeviceReservations(WEB)).isEmpty();
        assertThat(db.loadAll()).isEmpty();
    }

    @Test
    void unsetFieldsStayDistinctFromZeroAndFalse() {
        db.putAllocRunnerState(WEB, new AllocRunnerState("Pending", null, null));
        db.putAllocRunnerState(WEB2, new AllocRunnerState("Pending", "", 0L));

        assertThat(db.getAllocRunnerState(WEB).orElseThrow().observedGeneration())
                .isNull();
        assertThat(db.getAllocRunnerState(WEB2).orElseThrow().observedGeneration())
                .isZero();
        assertThat(db.getAllocRunnerState(WEB).orElseThrow().clientDescription())
                .isNull();
    }

    @Test
    void laterPutReplacesEarlierValue() {
        db.putAllocRunnerState(WEB, new AllocRunnerState("Pending", "waiting", 1L));
        db.putAllocRunnerState(WEB, new AllocRunnerState("Running", "Tasks are running", 1L));

        assertThat(db.getAllocRunnerState(WEB)).contains(new AllocRunnerState("Running", "Tasks are running", 1L));
    }

    @Test
    void duplicateWriteOpensNoTransaction() {
        TaskLocalState local = TaskLocalState.initial("mock").withHookDone("validate");
        db.putTaskLocalState(WEB, "main", local);
        StateStats before = db.stats();

        db.putTaskLocalState(WEB, "main", TaskLocalState.initial("mock").withHookDone("validate"));

        StateStats after = db.stats();
        assertThat(after.transactions()).isEqualTo(before.transactions());
        assertThat(after.writes()).isEqualTo(before.writes());
        assertThat(after.deduplicated()).isEqualTo(before.deduplicated() + 1);
    }

    @Test
    void equalStatesBuiltInDifferentOrderAreDuplicates() {
        db.putTaskLocalState(
                WEB, "main", new TaskLocalState("mock", Map.of("a", "1", "b", "2"), new TreeSet<>(List.of("x", "y"))));
        long transactions = db.stats().transactions();

        db.putTaskLocalState(
                WEB,
                "main",
                TaskLocalState.initial("mock")
                        .withHookDone("y")
                        .withHookDone("x")
                        .withDriverHandle(Map.of("b", "2", "a", "1")));

        assertThat(db.stats().transactions()).isEqualTo(transactions);
        assertThat(db.stats().deduplicated()).isEqualTo(1);
    }

    @Test
    void taskStateChangedInPlaceAndWrittenAgainIsStored() {
        TaskState state = taskState("{'state':'Pending'}");
        db.putTaskState(WEB, "main", state);

        state.setState(TaskState.State.Running);
        db.putTaskState(WEB, "main", state);

        assertThat(db.getTaskState(WEB, "main")).contains(taskState("{'state':'Running'}"));
        assertThat(db.stats().writes()).isEqualTo(2);
        assertThat(db.stats().deduplicated()).isZero();
    }

    @Test
    void taskStateEventChangedDeepInPlaceAndWrittenAgainIsStored() {
        TaskState state = taskState("{'state':'Running','events':[{'type':'Started','message':'first'}]}");
        db.putTaskState(WEB, "main", state);

        state.getEvents().getFirst().setMessage("second");
        db.putTaskState(WEB, "main", state);

        assertThat(db.getTaskState(WEB, "main")
                        .orElseThrow()
                        .getEvents()
                        .getFirst()
                        .getMessage())
                .isEqualTo("second");
        assertThat(db.stats().writes()).isEqualTo(2);
    }

    @Test
    void unchangedTaskStatePutAgainOpensNoTransaction() {
        db.putTaskState(WEB, "main", taskState("{'state':'Running','events':[{'type':'Started','message':'up'}]}"));
        StateStats before = db.stats();

        db.putTaskState(WEB, "main", taskState("{'state':'Running','events':[{'type':'Started','message':'up'}]}"));

        assertThat(db.stats().transactions()).isEqualTo(before.transactions());
        assertThat(db.stats().writes()).isEqualTo(before.writes());
        assertThat(db.stats().deduplicated()).isEqualTo(before.deduplicated() + 1);
    }

    @Test
    void specChangedDeepInPlaceAndWrittenAgainIsStored() {
        Allocation spec = spec("{'nodeName':'node-1','tasks':[{'name':'main','driver':'mock','env':[]}]}");
        db.putAllocation(WEB, spec);

        spec.getSpec().getTasks().getFirst().getEnv().add(new EnvVar("MODE", "fast"));
        db.putAllocation(WEB, spec);

        assertThat(db.getAllocation(WEB)
                        .orElseThrow()
                        .getSpec()
                        .getTasks()
                        .getFirst()
                        .getEnv())
                .containsExactly(new EnvVar("MODE", "fast"));
        assertThat(db.stats().writes()).isEqualTo(2);
        assertThat(db.stats().deduplicated()).isZero();
    }

    @Test
    void anObjectReadBackIsTheCallersOwn() {
        db.putTaskState(WEB, "main", taskState("{'state':'Pending'}"));

        db.getTaskState(WEB, "main").orElseThrow().setState(TaskState.State.Dead);

        assertThat(db.getTaskState(WEB, "main").orElseThrow().getState()).isEqualTo(TaskState.State.Pending);
    }

    @Test
    void sameValueUnderAnotherKeyIsWritten() {
        TaskState state = taskState("{'state':'Pending'}");
        db.putTaskState(WEB, "main", state);
        db.putTaskState(WEB, "sidecar", state);

        assertThat(db.stats().writes()).isEqualTo(2);
        assertThat(db.getTaskState(WEB, "sidecar")).contains(state);
    }

    @Test
    void deleteAllocationRemovesItAndAllItsTasksButNoOther() {
        for (AllocId id : List.of(WEB, WEB2)) {
            db.putAllocation(id, spec("{'nodeName':'" + id.name() + "'}"));
            db.putAllocRunnerState(id, new AllocRunnerState("Running", null, 1L));
            db.putDeviceReservations(id, List.of());
            db.putPorts(id, Map.of("http", 20001));
            db.putNetwork(id, "{}");
            db.putTaskLocalState(id, "main", TaskLocalState.initial("mock"));
            db.putTaskState(id, "main", taskState("{'state':'Running'}"));
        }

        db.deleteAllocation(WEB);

        assertThat(db.getAllocation(WEB)).isEmpty();
        assertThat(db.getAllocRunnerState(WEB)).isEmpty();
        assertThat(db.getDeviceReservations(WEB)).isEmpty();
        assertThat(db.getPorts(WEB)).isEmpty();
        assertThat(db.getNetwork(WEB)).isEmpty();
        assertThat(db.getTaskLocalState(WEB, "main")).isEmpty();
        assertThat(db.getTaskState(WEB, "main")).isEmpty();
        assertThat(db.loadAll()).extracting(StoredAllocation::id).containsExactly(WEB2);
        assertThat(db.getTaskState(WEB2, "main")).isPresent();
        assertThat(db.stats().deletes()).isEqualTo(1);
    }

    @Test
    void writeAfterDeleteIsStoredEvenIfTheValueIsTheSameAsBefore() {
        Allocation spec = spec("{'nodeName':'node-1'}");
        db.putAllocation(WEB, spec);
        db.deleteAllocation(WEB);

        db.putAllocation(WEB, spec);

        assertThat(db.getAllocation(WEB)).contains(spec);
        assertThat(db.stats().deduplicated()).isZero();
        assertThat(db.stats().writes()).isEqualTo(2);
    }

    @Test
    void loadAllReadsManyAllocationsEachWithItsOwnEntriesInTheOrderOfTheirIds() {
        List<AllocId> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            AllocId id = new AllocId("default", "web-" + i);
            ids.add(id);
            db.putAllocation(id, spec("{'nodeName':'node-" + i + "'}"));
            db.putTaskState(id, "main", taskState("{'state':'Running','restarts':" + i + "}"));
        }

        List<StoredAllocation> all = db.loadAll();

        assertThat(all)
                .extracting(StoredAllocation::id)
                .containsExactlyElementsOf(
                        new TreeSet<>(ids.stream().map(AllocId::key).toList())
                                .stream().map(AllocId::parse).toList());
        assertThat(all).allSatisfy(a -> {
            String i = a.id().name().substring("web-".length());
            assertThat(a.spec().orElseThrow().getSpec().getNodeName()).isEqualTo("node-" + i);
            assertThat(a.tasks().get("main").state().orElseThrow().getRestarts())
                    .isEqualTo(Integer.parseInt(i));
        });
    }

    @Test
    void loadAllGroupsEntriesByAllocationAndTask() {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        db.putAllocRunnerState(WEB, new AllocRunnerState("Running", null, 2L));
        db.putTaskLocalState(WEB, "main", TaskLocalState.initial("mock"));
        db.putTaskState(WEB, "main", taskState("{'state':'Running'}"));
        db.putTaskState(WEB, "sidecar", taskState("{'state':'Pending'}"));
        db.putTaskState(WEB2, "main", taskState("{'state':'Dead'}"));

        List<StoredAllocation> all = db.loadAll();

        assertThat(all).extracting(StoredAllocation::id).containsExactly(WEB, WEB2);
        StoredAllocation web = all.getFirst();
        assertThat(web.spec()).contains(spec("{'nodeName':'a'}"));
        assertThat(web.state()).contains(new AllocRunnerState("Running", null, 2L));
        assertThat(web.devices()).isEmpty();
        assertThat(web.tasks().keySet()).containsExactly("main", "sidecar");
        assertThat(web.tasks().get("main").localState()).contains(TaskLocalState.initial("mock"));
        assertThat(web.tasks().get("sidecar").localState()).isEmpty();
        assertThat(web.tasks().get("sidecar").state()).contains(taskState("{'state':'Pending'}"));
        StoredAllocation orphan = all.get(1);
        assertThat(orphan.spec())
                .as("tasks whose allocation spec was never stored")
                .isEmpty();
        assertThat(orphan.tasks().keySet()).containsExactly("main");
    }

    @Test
    void concurrentWritersAllLand() throws Exception {
        int writers = 8;
        int perWriter = 25;
        try (ExecutorService pool = Executors.newFixedThreadPool(writers)) {
            List<Callable<Void>> jobs = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                String task = "t" + w;
                jobs.add(() -> {
                    for (int i = 1; i <= perWriter; i++) {
                        db.putTaskState(WEB, task, taskState("{'restarts':" + i + "}"));
                    }
                    return null;
                });
            }
            for (Future<Void> f : pool.invokeAll(jobs)) {
                f.get();
            }
        }

        for (int w = 0; w < writers; w++) {
            assertThat(db.getTaskState(WEB, "t" + w)).contains(taskState("{'restarts':" + perWriter + "}"));
        }
        assertThat(db.stats().writes()).isEqualTo(writers * perWriter);
        assertThat(db.stats().transactions()).isLessThanOrEqualTo(writers * perWriter);
    }

    @Test
    void closeStopsTheWriterThreadAndRefusesWrites() {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));

        db.close();

        assertThat(liveStoreThreads()).isEmpty();
        assertThatThrownBy(() -> db.putAllocation(WEB, spec("{'nodeName':'a'}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> db.putAllocation(WEB, spec("{'nodeName':'b'}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void taskNamesMustBeDns1123Labels() {
        assertThatThrownBy(() -> db.putTaskState(WEB, "../etc", taskState("{}")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task name '../etc'")
                .hasMessageContaining("DNS-1123");
    }

    @Test
    void reportsTheCurrentSchemaVersion() {
        assertThat(db.schemaVersion()).isEqualTo(SqliteSchema.CURRENT_VERSION);
    }

    static Set<Thread> liveStoreThreads() {
        Set<Thread> threads = Thread.getAllStackTraces().keySet();
        threads.removeIf(t -> !t.getName().startsWith("drover-state"));
        return threads;
    }
}
