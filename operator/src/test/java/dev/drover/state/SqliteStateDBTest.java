package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteStateDBTest extends StateDBContractTest {

    @TempDir
    Path dataDir;

    @Override
    StateDB openStore() {
        return StateStores.open(dataDir);
    }

    private StateDB reopen() {
        db.close();
        db = StateStores.open(dataDir);
        return db;
    }

    @Test
    void valuesSurviveReopen() {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        db.putTaskLocalState(WEB, "main", TaskLocalState.initial("mock").withHookDone("validate"));

        reopen();

        assertThat(db.getAllocation(WEB)).contains(spec("{'nodeName':'a'}"));
        assertThat(db.getTaskLocalState(WEB, "main").orElseThrow().hookDone("validate"))
                .isTrue();
    }

    @Test
    void deduplicationIsPrimedWhenTheStoreOpens() {
        db.putAllocRunnerState(WEB, new AllocRunnerState("Running", null, 4L));

        reopen();
        db.putAllocRunnerState(WEB, new AllocRunnerState("Running", null, 4L));

        assertThat(db.stats()).isEqualTo(new StateStats(0, 1, 0, 0, 0, 0, 0));
    }

    @Test
    void storeFromANewerAgentIsRefusedWithWhatToDo() throws Exception {
        db.close();
        try (Connection c = jdbc()) {
            c.createStatement().execute("UPDATE meta SET value = '7' WHERE name = 'schema_version'");
        }

        assertThatThrownBy(() -> StateStores.open(dataDir))
                .isInstanceOf(StateSchemaException.class)
                .hasMessageContaining("schema version 7")
                .hasMessageContaining("supports versions up to " + SqliteSchema.CURRENT_VERSION)
                .hasMessageContaining("run that version")
                .hasMessageContaining("move " + dataDir.resolve("state.db") + " aside");
        db = StateStores.inMemory();
        assertThat(liveStoreThreads()).isEmpty();
    }

    @Test
    void databaseThatIsNotAStateStoreIsRefused() throws Exception {
        db.close();
        Files.delete(dataDir.resolve("state.db"));
        try (Connection c = jdbc()) {
            c.createStatement().execute("CREATE TABLE photos (id INTEGER)");
        }

        assertThatThrownBy(() -> StateStores.open(dataDir))
                .isInstanceOf(StateSchemaException.class)
                .hasMessageContaining("not a Drover state store")
                .hasMessageContaining("--data-dir");
        db = StateStores.inMemory();
    }

    @Test
    void fileThatIsNotADatabaseIsRefusedNamingIt() throws Exception {
        db.close();
        Files.delete(dataDir.resolve("state.db"));
        Files.deleteIfExists(dataDir.resolve("state.db-wal"));
        Files.deleteIfExists(dataDir.resolve("state.db-shm"));
        Files.writeString(dataDir.resolve("state.db"), "not a database, just text that is long enough ".repeat(20));

        assertThatThrownBy(() -> StateStores.open(dataDir))
                .isInstanceOf(StateStoreException.class)
                .hasMessageContaining(dataDir.resolve("state.db").toString())
                .hasMessageContaining("move it aside");
        db = StateStores.inMemory();
        assertThat(liveStoreThreads()).isEmpty();
    }

    @Test
    void versionOneStoreIsBackedUpThenUpgraded() throws Exception {
        db.close();
        Files.delete(dataDir.resolve("state.db"));
        Files.deleteIfExists(dataDir.resolve("state.db-wal"));
        Files.deleteIfExists(dataDir.resolve("state.db-shm"));
        byte[] spec = StoredJsonCompatibilityTest.STORED_ALLOCATION.getBytes(StandardCharsets.UTF_8);
        try (Connection c = jdbc()) {
            Statement s = c.createStatement();
            for (String ddl : SqliteSchema.V1_DDL) {
                s.execute(ddl);
            }
            PreparedStatement insert = c.prepareStatement("INSERT INTO kv (bucket, key, value) VALUES (?, ?, ?)");
            insert.setString(1, "alloc");
            insert.setString(2, "default/web");
            insert.setBytes(3, spec);
            insert.executeUpdate();
        }

        db = StateStores.open(dataDir);

        assertThat(db.schemaVersion()).isEqualTo(2);
        Allocation allocation = JSON.readValue(StoredJsonCompatibilityTest.ALLOCATION, Allocation.class);
        assertThat(db.getAllocation(WEB)).contains(allocation);
        db.putAllocation(WEB, allocation);
        assertThat(db.stats().deduplicated())
                .as("hash filled in by the upgrade primes deduplication")
                .isEqualTo(1);
        Path backup = dataDir.resolve("state.db.bak-v1");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + backup);
                ResultSet rs = c.createStatement()
                        .executeQuery(
                                "SELECT (SELECT value FROM meta WHERE name = 'schema_version'), count(*) FROM kv")) {
            assertThat(rs.getString(1)).isEqualTo("1");
            assertThat(rs.getInt(2)).isEqualTo(1);
        }
    }

    @Test
    void closingCommitsNoEmptyTransaction() {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        StateDB other = db;

        other.close();

        assertThat(other.stats().transactions()).isEqualTo(1);
    }

    @Test
    void currentStoreIsNotBackedUpAgainOnOpen() {
        reopen();

        assertThat(dataDir.resolve("state.db.bak-v1")).doesNotExist();
        assertThat(dataDir.resolve("state.db.bak-v2")).doesNotExist();
    }

    @Test
    void anUnreadableEntryIsQuarantinedAndEveryOtherAllocationRestores() throws Exception {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        db.putTaskState(WEB, "main", taskState("{'state':'Running'}"));
        db.putAllocation(WEB2, spec("{'nodeName':'b'}"));
        db.putTaskLocalState(WEB2, "main", TaskLocalState.initial("raw_exec"));
        db.close();
        byte[] torn = "{\"a\":".getBytes(StandardCharsets.UTF_8);
        try (Connection c = jdbc();
                PreparedStatement tear =
                        c.prepareStatement("UPDATE kv SET value = ? WHERE bucket = 'alloc' AND key = 'default/web'")) {
            tear.setBytes(1, torn);
            assertThat(tear.executeUpdate()).isEqualTo(1);
        }
        db = StateStores.open(dataDir);

        java.util.List<StoredAllocation> all = db.loadAll();

        assertThat(all).extracting(StoredAllocation::id).containsExactly(WEB, WEB2);
        assertThat(all.get(0).spec())
                .as("lost: taken on again from the API server")
                .isEmpty();
        assertThat(all.get(0).damaged()).isTrue();
        assertThat(all.get(0).tasks()).containsKey("main");
        assertThat(all.get(1).spec()).contains(spec("{'nodeName':'b'}"));
        assertThat(all.get(1).damaged()).isFalse();
        assertThat(db.stats().quarantined()).isEqualTo(1);
        try (Connection c = jdbc();
                ResultSet rs = c.createStatement().executeQuery("SELECT bucket, key, value, reason FROM quarantine")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("alloc");
            assertThat(rs.getString(2)).isEqualTo("default/web");
            assertThat(rs.getBytes(3)).as("kept as it was, never deleted").isEqualTo(torn);
            assertThat(rs.getString(4)).contains("alloc/default/web");
            assertThat(rs.next()).isFalse();
        }
        assertThat(db.loadAll().getFirst().damaged())
                .as("moved aside: the next start does not meet it again")
                .isFalse();
    }

    /**
     * JSON's {@code null} in an entry (a hand edit, a tool's) is valid JSON the agent never writes: it decoded to a
     * Java null, and the restore stopped on it with a NullPointerException, so the agent could not start at all.
     */
    @Test
    void anEntryHoldingNullIsQuarantinedAndEveryOtherAllocationRestores() throws Exception {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        db.putDeviceReservations(
                WEB, java.util.List.of(new DeviceReservation("main", "nvidia", "gpu", "x", java.util.List.of("0"))));
        db.putAllocation(WEB2, spec("{'nodeName':'b'}"));
        db.close();
        try (Connection c = jdbc()) {
            assertThat(c.createStatement()
                            .executeUpdate(
                                    "UPDATE kv SET value = X'6E756C6C' WHERE bucket = 'alloc' AND key = 'default/web'"))
                    .isEqualTo(1); // null
            assertThat(
                            c.createStatement()
                                    .executeUpdate(
                                            "UPDATE kv SET value = X'5B6E756C6C5D' WHERE bucket = 'devices' AND key = 'default/web'"))
                    .isEqualTo(1); // [null]
        }
        db = StateStores.open(dataDir);

        java.util.List<StoredAllocation> all = db.loadAll();

        assertThat(all).extracting(StoredAllocation::id).containsExactly(WEB, WEB2);
        assertThat(all.get(0).spec()).isEmpty();
        assertThat(all.get(0).devices()).isEmpty();
        assertThat(all.get(0).damaged()).isTrue();
        assertThat(all.get(1).spec()).contains(spec("{'nodeName':'b'}"));
        assertThat(db.stats().quarantined()).isEqualTo(2);
    }

    @Test
    void anEntryWhoseKeyNamesNoAllocationIsQuarantinedNotFatal() throws Exception {
        db.putAllocation(WEB, spec("{'nodeName':'a'}"));
        db.close();
        try (Connection c = jdbc()) {
            c.createStatement()
                    .execute("INSERT INTO kv (bucket, key, value) VALUES ('taskState', 'no-slash', X'7B7D')");
        }
        db = StateStores.open(dataDir);

        assertThat(db.loadAll()).extracting(StoredAllocation::id).containsExactly(WEB);
        assertThat(db.stats().quarantined()).isEqualTo(1);
    }

    private Connection jdbc() throws Exception {
        return DriverManager.getConnection("jdbc:sqlite:" + dataDir.resolve("state.db"));
    }
}
