package dev.drover.state;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import java.util.List;
import java.util.Optional;

/**
 * What alloc and task runners persist so a restarted agent picks up where it
 * left off. Every put returns once the value is durable; a put of the value a
 * key already holds returns at once, without touching the disk. Callers never
 * know whether the store is durable or in memory. Safe for concurrent use:
 * concurrent puts share transactions; puts of one key apply in call order.
 *
 * <p>A put or delete the store cannot write (a full disk) throws a
 * {@link StateStoreException}, but is not lost: the store keeps it and writes
 * it again with back-off until it succeeds or a newer put of the key (or a
 * delete) replaces it. A put never lands before an earlier delete of its
 * allocation. {@link #unstored} and {@link #onStored} tell callers where
 * things stand. {@link StateStores} opens one.
 */
public interface StateDB extends AutoCloseable {

    /** The schema version of the store (the durable store's layout on disk). */
    int schemaVersion();

    /**
     * The allocation spec snapshot the runner was built from. The store keeps what {@code spec} holds at the
     * call: changing the object afterwards changes nothing stored (put it again to store the change).
     */
    void putAllocation(AllocId id, Allocation spec);

    /** A new object each call, the caller's own. */
    Optional<Allocation> getAllocation(AllocId id);

    void putAllocRunnerState(AllocId id, AllocRunnerState state);

    Optional<AllocRunnerState> getAllocRunnerState(AllocId id);

    void putTaskLocalState(AllocId id, String task, TaskLocalState state);

    Optional<TaskLocalState> getTaskLocalState(AllocId id, String task);

    /** The task's state as the allocation status reports it; as {@link #putAllocation}, kept as it is at the call. */
    void putTaskState(AllocId id, String task, TaskState state);

    /** A new object each call, the caller's own. */
    Optional<TaskState> getTaskState(AllocId id, String task);

    /** Replaces the allocation's device reservations; an empty list keeps "none reserved" explicit. */
    void putDeviceReservations(AllocId id, List<DeviceReservation> reservations);

    /** Empty when none were ever stored. */
    Optional<List<DeviceReservation>> getDeviceReservations(AllocId id);

    /** Replaces the host ports the allocation holds (by port name); an empty map keeps "none held" explicit. */
    void putPorts(AllocId id, java.util.Map<String, Integer> hostPorts);

    /** Empty when none were ever stored. */
    Optional<java.util.Map<String, Integer>> getPorts(AllocId id);

    /**
     * The allocation's network as its agent set it up: an opaque document (JSON) the network's owner writes and
     * reads back after a restart.
     */
    void putNetwork(AllocId id, String network);

    /** Empty when none was stored. */
    Optional<String> getNetwork(AllocId id);

    /**
     * Everything stored, one entry per allocation that has any entry, ordered by id. An entry that cannot be
     * read is moved to the store's quarantine and left out; its allocation is marked {@link StoredAllocation#damaged}.
     */
    List<StoredAllocation> loadAll();

    /** Removes the allocation and all its tasks' entries in one transaction. */
    void deleteAllocation(AllocId id);

    StateStats stats();

    /** Why some of the allocation's state waits to be written again, or empty when all of it is stored. */
    Optional<String> unstored(AllocId id);

    /**
     * {@code listener} is told, on the store's retry thread, of each allocation whose waiting writes have all
     * been written again. One listener; a later call replaces it.
     */
    void onStored(java.util.function.Consumer<AllocId> listener);

    /** Waits for queued writes, stops the writer thread and closes the store. */
    @Override
    void close();
}
