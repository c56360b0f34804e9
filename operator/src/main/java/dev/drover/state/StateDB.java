package dev.drover.state;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What alloc and task runners persist so a restarted agent picks up where it
 * left off. Every put returns once the value is durable; a put of the value a
 * key already holds returns at once, without touching the disk. Callers never
 * know whether the store is durable or in memory. Safe for concurrent use:
 * concurrent puts share transactions; puts of one key apply in call order.
 */
public interface StateDB extends AutoCloseable {

    /** The durable store in {@code dataDir/state.db}, created or upgraded as needed. */
    static StateDB open(Path dataDir) {
        return new KvStateDB(SqliteKvStore.open(dataDir));
    }

    /** A store in memory, for tests. */
    static StateDB inMemory() {
        return new KvStateDB(new MemoryKvStore());
    }

    /** The schema version of the store (the durable store's layout on disk). */
    int schemaVersion();

    /** The allocation spec snapshot the runner was built from. */
    void putAllocation(AllocId id, JsonNode spec);

    Optional<JsonNode> getAllocation(AllocId id);

    void putAllocRunnerState(AllocId id, AllocRunnerState state);

    Optional<AllocRunnerState> getAllocRunnerState(AllocId id);

    void putTaskLocalState(AllocId id, String task, TaskLocalState state);

    Optional<TaskLocalState> getTaskLocalState(AllocId id, String task);

    /** The task's state as the allocation status reports it. */
    void putTaskState(AllocId id, String task, JsonNode state);

    Optional<JsonNode> getTaskState(AllocId id, String task);

    /** Replaces the allocation's device reservations; an empty list keeps "none reserved" explicit. */
    void putDeviceReservations(AllocId id, List<DeviceReservation> reservations);

    /** Empty when none were ever stored. */
    Optional<List<DeviceReservation>> getDeviceReservations(AllocId id);

    /** Everything stored, one entry per allocation that has any entry, ordered by id. */
    List<StoredAllocation> loadAll();

    /** Removes the allocation and all its tasks' entries in one transaction. */
    void deleteAllocation(AllocId id);

    StateStats stats();

    /** Waits for queued writes, stops the writer thread and closes the store. */
    @Override
    void close();
}
