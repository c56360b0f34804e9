package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.state.AllocId;
import dev.drover.state.AllocRunnerState;
import dev.drover.state.DeviceReservation;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.state.TaskLocalState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDumpCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AllocId WEB = new AllocId("default", "web");

    @TempDir
    Path dataDir;

    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    private int run(Map<String, String> env, String... args) {
        return Main.run(
                args,
                env,
                new PrintStream(stdout, true, StandardCharsets.UTF_8),
                new PrintStream(stderr, true, StandardCharsets.UTF_8));
    }

    private JsonNode printed() throws Exception {
        return JSON.readTree(stdout.toString(StandardCharsets.UTF_8));
    }

    private static <T> T read(String json, Class<T> type) throws Exception {
        return JSON.readValue(json.replace('\'', '"'), type);
    }

    private static Allocation onNode(String nodeName) throws Exception {
        return read("{'spec':{'nodeName':'" + nodeName + "'}}", Allocation.class);
    }

    @Test
    void dumpPrintsEveryAllocationWithItsTasksAsJson() throws Exception {
        try (StateDB db = StateStores.open(dataDir)) {
            db.putAllocation(WEB, onNode("node-1"));
            db.putAllocRunnerState(WEB, new AllocRunnerState("Running", "Tasks are running", 2L));
            db.putDeviceReservations(
                    WEB, List.of(new DeviceReservation("main", "nvidia", "gpu", null, List.of("GPU-0"))));
            db.putTaskLocalState(WEB, "main", TaskLocalState.initial("mock").withHookDone("validate"));
            db.putTaskState(WEB, "main", read("{'state':'Running','restarts':1}", TaskState.class));
        }

        int exit = run(Map.of(), "state", "dump", "--data-dir", dataDir.toString());

        assertThat(exit).as("stderr: %s", stderr).isZero();
        JsonNode dump = printed();
        assertThat(dump.get("schemaVersion").asInt()).isEqualTo(2);
        JsonNode alloc = dump.get("allocations").get(0);
        assertThat(alloc.get("id").asText()).isEqualTo("default/web");
        assertThat(alloc.at("/alloc/spec/nodeName").asText()).isEqualTo("node-1");
        assertThat(alloc.at("/allocState/clientStatus").asText()).isEqualTo("Running");
        assertThat(alloc.at("/devices/0/ids/0").asText()).isEqualTo("GPU-0");
        assertThat(alloc.at("/tasks/main/taskLocal/hooksDone/0").asText()).isEqualTo("validate");
        assertThat(alloc.at("/tasks/main/taskState/restarts").asInt()).isEqualTo(1);
    }

    @Test
    void dumpReadsTheStoreWhileTheAgentHoldsItOpenAndIsMidTransaction() throws Exception {
        try (StateDB agent = StateStores.open(dataDir);
                Connection other = DriverManager.getConnection("jdbc:sqlite:" + dataDir.resolve("state.db"));
                Statement uncommitted = other.createStatement()) {
            agent.putAllocation(WEB, onNode("committed"));
            uncommitted.execute("BEGIN IMMEDIATE");
            uncommitted.execute("INSERT INTO kv (bucket, key, value) VALUES ('alloc', 'default/pending', x'7B7D')");

            int exit = run(Map.of(), "state", "dump", "--data-dir=" + dataDir);

            uncommitted.execute("ROLLBACK");
            assertThat(exit).as("stderr: %s", stderr).isZero();
            assertThat(printed().get("allocations"))
                    .extracting(a -> a.get("id").asText())
                    .containsExactly("default/web");
            agent.putAllocation(WEB, onNode("again"));
            assertThat(agent.getAllocation(WEB)).contains(onNode("again"));
        }
    }

    @Test
    void dataDirComesFromTheEnvironmentWhenNoFlagIsGiven() throws Exception {
        StateStores.open(dataDir).close();

        int exit = run(Map.of("DROVER_DATA_DIR", dataDir.toString()), "state", "dump");

        assertThat(exit).as("stderr: %s", stderr).isZero();
        assertThat(printed().get("allocations")).isEmpty();
    }

    @Test
    void missingStoreIsAnErrorThatNamesTheFile() {
        int exit = run(
                Map.of(), "state", "dump", "--data-dir", dataDir.resolve("nope").toString());

        assertThat(exit).isEqualTo(1);
        assertThat(stderr.toString(StandardCharsets.UTF_8))
                .contains("no state store at " + dataDir.resolve("nope").resolve("state.db"))
                .contains("--data-dir");
        assertThat(dataDir.resolve("nope")).as("dump must not create anything").doesNotExist();
    }

    @Test
    void anythingElsePrintsUsageAndExitsTwo() {
        assertThat(run(Map.of())).isEqualTo(2);
        assertThat(run(Map.of(), "--node", "n1", "--bogus")).isEqualTo(2);
        assertThat(run(Map.of(), "--node", "n1", "--device-plugin", "quantum")).isEqualTo(2);
        assertThat(run(Map.of(), "state", "dump", "--verbose", "--data-dir", "x"))
                .isEqualTo(2);
        assertThat(run(Map.of(), "state", "dump")).isEqualTo(2);

        assertThat(stdout.size()).isZero();
        assertThat(stderr.toString(StandardCharsets.UTF_8))
                .contains("java -jar drover-agent.jar state dump --data-dir DIR")
                .contains("unknown argument \"--bogus\"")
                .contains("no device plugin named 'quantum'")
                .contains("unknown argument '--verbose'")
                .contains("--data-dir is required");
    }
}
