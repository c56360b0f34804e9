package dev.drover.state;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.Backoff;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link StateDB} over the key-value layer: values as JSON, writes deduplicated, failed writes kept and
 * written again ({@link WriteRetry}), unreadable entries quarantined at restore.
 */
final class KvStateDB implements StateDB {

    private static final TypeReference<List<DeviceReservation>> RESERVATIONS = new TypeReference<>() {};
    private static final TypeReference<Map<String, Integer>> PORTS = new TypeReference<>() {};

    private static final Logger LOG = LoggerFactory.getLogger(KvStateDB.class);

    private final DeduplicatingStore store;
    private final WriteRetry retry;
    private final StateCodec codec = new StateCodec();

    KvStateDB(KvStore kv) {
        this(kv, WriteRetry.DEFAULT_BACKOFF);
    }

    KvStateDB(KvStore kv, Backoff backoff) {
        WriteRetry[] retrying = new WriteRetry[1];
        DeduplicatingStore opened;
        try {
            opened = new DeduplicatingStore(kv, () -> retrying[0].failed());
        } catch (RuntimeException e) {
            kv.close();
            throw e;
        }
        this.store = opened;
        this.retry = new WriteRetry(opened, backoff);
        retrying[0] = retry;
    }

    @Override
    public int schemaVersion() {
        return store.schemaVersion();
    }

    @Override
    public void putAllocation(AllocId id, Allocation spec) {
        requireValue(spec, Bucket.ALLOC, id.key());
        putModel(Bucket.ALLOC, id.key(), spec);
    }

    @Override
    public Optional<Allocation> getAllocation(AllocId id) {
        return get(Bucket.ALLOC, id.key()).map(b -> codec.decodeModel(b, Allocation.class, Bucket.ALLOC, id.key()));
    }

    @Override
    public void putAllocRunnerState(AllocId id, AllocRunnerState state) {
        requireValue(state, Bucket.ALLOC_STATE, id.key());
        put(Bucket.ALLOC_STATE, id.key(), state, UnaryOperator.identity());
    }

    @Override
    public Optional<AllocRunnerState> getAllocRunnerState(AllocId id) {
        return get(Bucket.ALLOC_STATE, id.key())
                .map(b -> codec.decode(b, AllocRunnerState.class, Bucket.ALLOC_STATE, id.key()));
    }

    @Override
    public void putTaskLocalState(AllocId id, String task, TaskLocalState state) {
        requireValue(state, Bucket.TASK_LOCAL, id.taskKey(task));
        put(Bucket.TASK_LOCAL, id.taskKey(task), state, UnaryOperator.identity());
    }

    @Override
    public Optional<TaskLocalState> getTaskLocalState(AllocId id, String task) {
        String key = id.taskKey(task);
        return get(Bucket.TASK_LOCAL, key).map(b -> codec.decode(b, TaskLocalState.class, Bucket.TASK_LOCAL, key));
    }

    @Override
    public void putTaskState(AllocId id, String task, TaskState state) {
        String key = id.taskKey(task);
        requireValue(state, Bucket.TASK_STATE, key);
        if (store.dropIfUnchanged(Bucket.TASK_STATE, key, state)) {
            return; // a task runner puts its state on every event: an unchanged one costs a comparison
        }
        store.put(
                Bucket.TASK_STATE,
                key,
                codec.encodeModel(state),
                TaskStateSnapshots.copy(state, store.snapshot(Bucket.TASK_STATE, key)));
    }

    @Override
    public Optional<TaskState> getTaskState(AllocId id, String task) {
        String key = id.taskKey(task);
        return get(Bucket.TASK_STATE, key).map(b -> codec.decodeModel(b, TaskState.class, Bucket.TASK_STATE, key));
    }

    @Override
    public void putDeviceReservations(AllocId id, List<DeviceReservation> reservations) {
        requireValue(reservations, Bucket.DEVICES, id.key());
        put(Bucket.DEVICES, id.key(), List.copyOf(reservations), UnaryOperator.identity());
    }

    @Override
    public Optional<List<DeviceReservation>> getDeviceReservations(AllocId id) {
        return get(Bucket.DEVICES, id.key()).map(b -> codec.decode(b, RESERVATIONS, Bucket.DEVICES, id.key()));
    }

    @Override
    public void putPorts(AllocId id, Map<String, Integer> hostPorts) {
        requireValue(hostPorts, Bucket.PORTS, id.key());
        put(Bucket.PORTS, id.key(), new java.util.TreeMap<>(hostPorts), UnaryOperator.identity());
    }

    @Override
    public Optional<Map<String, Integer>> getPorts(AllocId id) {
        return get(Bucket.PORTS, id.key()).map(b -> codec.decode(b, PORTS, Bucket.PORTS, id.key()));
    }

    @Override
    public void putNetwork(AllocId id, String network) {
        requireValue(network, Bucket.NETWORK, id.key());
        put(Bucket.NETWORK, id.key(), network, UnaryOperator.identity());
    }

    @Override
    public Optional<String> getNetwork(AllocId id) {
        return get(Bucket.NETWORK, id.key()).map(b -> codec.decode(b, String.class, Bucket.NETWORK, id.key()));
    }

    /**
     * Reads every entry; one that cannot be read (not JSON, not the shape expected, a key that names no
     * allocation) is moved to the quarantine and left out, so the rest restores: what it held is taken on
     * again from the API server.
     */
    @Override
    public List<StoredAllocation> loadAll() {
        Map<Bucket, SortedMap<String, byte[]>> buckets = new java.util.EnumMap<>(Bucket.class);
        for (Bucket b : Bucket.values()) {
            buckets.put(b, new TreeMap<>(store.scan(b)));
        }
        TreeMap<String, AllocId> ids = new TreeMap<>();
        buckets.forEach((bucket, entries) -> entries.keySet().removeIf(key -> {
            String allocKey = bucket.allocationKey(key);
            try {
                ids.computeIfAbsent(allocKey, AllocId::parse);
                if (bucket.perTask()) {
                    AllocId.parse(allocKey).taskKey(key.substring(allocKey.length() + 1));
                }
                return false;
            } catch (IllegalArgumentException e) {
                quarantine(bucket, key, "its key names no allocation: " + e.getMessage(), EnumSet.noneOf(Bucket.class));
                return true;
            }
        }));
        // each allocation's entries decoded on their own (in parallel: the decoding is most of a restore's read)
        return ids.values().parallelStream().map(id -> loaded(id, buckets)).toList();
    }

    private StoredAllocation loaded(AllocId id, Map<Bucket, SortedMap<String, byte[]>> buckets) {
        String key = id.key();
        Set<Bucket> lost = EnumSet.noneOf(Bucket.class);
        Optional<Allocation> spec = decoded(
                buckets, Bucket.ALLOC, key, lost, b -> codec.decodeModel(b, Allocation.class, Bucket.ALLOC, key));
        Optional<AllocRunnerState> state = decoded(
                buckets,
                Bucket.ALLOC_STATE,
                key,
                lost,
                b -> codec.decode(b, AllocRunnerState.class, Bucket.ALLOC_STATE, key));
        List<DeviceReservation> devices = decoded(
                        buckets, Bucket.DEVICES, key, lost, b -> codec.decode(b, RESERVATIONS, Bucket.DEVICES, key))
                .orElse(List.of());
        Map<String, Integer> ports = decoded(
                        buckets, Bucket.PORTS, key, lost, b -> codec.decode(b, PORTS, Bucket.PORTS, key))
                .orElse(Map.of());
        Optional<String> network =
                decoded(buckets, Bucket.NETWORK, key, lost, b -> codec.decode(b, String.class, Bucket.NETWORK, key));
        SortedMap<String, StoredTask> tasks = tasksOf(id, buckets, lost);
        return new StoredAllocation(id, spec, state, devices, ports, network, tasks, !lost.isEmpty());
    }

    /** The entry decoded; empty when there is none, or when it cannot be read (then it is quarantined). */
    private <T> Optional<T> decoded(
            Map<Bucket, SortedMap<String, byte[]>> buckets,
            Bucket bucket,
            String key,
            Set<Bucket> lost,
            java.util.function.Function<byte[], T> decode) {
        byte[] bytes = buckets.get(bucket).get(key);
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(decode.apply(bytes));
        } catch (StateStoreException e) {
            quarantine(bucket, key, e.getMessage(), lost);
            return Optional.empty();
        }
    }

    private void quarantine(Bucket bucket, String key, String reason, Set<Bucket> lost) {
        lost.add(bucket);
        boolean moved = store.quarantine(bucket, key, reason);
        LOG.error(
                "state entry {}/{} cannot be read and is left out of the restore: {}. {}",
                bucket.storedName(),
                key,
                reason,
                moved
                        ? "It was moved to the quarantine table of the store (inspect it with sqlite3:"
                                + " SELECT * FROM quarantine); the allocation is taken on again from the API server."
                        : "It could not be moved aside either (the store cannot write) and stays where it is.");
    }

    private SortedMap<String, StoredTask> tasksOf(
            AllocId id, Map<Bucket, SortedMap<String, byte[]>> buckets, Set<Bucket> lost) {
        String prefix = id.key() + "/";
        TreeMap<String, StoredTask> tasks = new TreeMap<>();
        for (String key : taskKeys(prefix, buckets)) {
            String name = key.substring(prefix.length());
            Optional<TaskLocalState> local = decoded(
                    buckets,
                    Bucket.TASK_LOCAL,
                    key,
                    lost,
                    b -> codec.decode(b, TaskLocalState.class, Bucket.TASK_LOCAL, key));
            Optional<TaskState> state = decoded(
                    buckets,
                    Bucket.TASK_STATE,
                    key,
                    lost,
                    b -> codec.decodeModel(b, TaskState.class, Bucket.TASK_STATE, key));
            tasks.put(name, new StoredTask(name, local, state));
        }
        return tasks;
    }

    private static List<String> taskKeys(String prefix, Map<Bucket, SortedMap<String, byte[]>> buckets) {
        TreeMap<String, Boolean> keys = new TreeMap<>();
        for (Bucket b : List.of(Bucket.TASK_LOCAL, Bucket.TASK_STATE)) {
            // '0' follows '/', so this is exactly the keys under prefix.
            buckets.get(b)
                    .subMap(prefix, prefix.substring(0, prefix.length() - 1) + '0')
                    .keySet()
                    .forEach(k -> keys.put(k, true));
        }
        return List.copyOf(keys.keySet());
    }

    @Override
    public void deleteAllocation(AllocId id) {
        String key = id.key();
        String tasks = key + "/";
        store.delete(List.of(
                new Mutation.Delete(Bucket.ALLOC, key),
                new Mutation.Delete(Bucket.ALLOC_STATE, key),
                new Mutation.Delete(Bucket.DEVICES, key),
                new Mutation.Delete(Bucket.PORTS, key),
                new Mutation.Delete(Bucket.NETWORK, key),
                new Mutation.DeletePrefix(Bucket.TASK_LOCAL, tasks),
                new Mutation.DeletePrefix(Bucket.TASK_STATE, tasks)));
    }

    @Override
    public StateStats stats() {
        return store.stats();
    }

    @Override
    public Optional<String> unstored(AllocId id) {
        if (!store.hasUnstored() || !store.isUnstored(id.key())) {
            return Optional.empty();
        }
        return Optional.of(String.valueOf(store.lastFailure()));
    }

    @Override
    public void onStored(Consumer<AllocId> listener) {
        retry.onStored(key -> listener.accept(AllocId.parse(key)));
    }

    @Override
    public void close() {
        retry.close();
        if (store.hasUnstored()) {
            LOG.warn(
                    "closing the state store with {} write(s) it could not make (allocations {}): the next agent takes"
                            + " them on again from the API server",
                    store.stats().unstored(),
                    store.unstoredAllocations());
        }
        store.close();
    }

    /**
     * @param snapshotOf makes an immutable object equal to {@code value}, only for a value that is
     *                   written: the records here are immutable and their own snapshot
     */
    private <T> void put(Bucket bucket, String key, T value, UnaryOperator<T> snapshotOf) {
        if (store.dropIfUnchanged(bucket, key, value)) {
            return;
        }
        store.put(bucket, key, codec.encode(value), snapshotOf.apply(value));
    }

    /**
     * The API model is mutable, and a caller may change an object it put: it is compared by its bytes' hash (the
     * store's deduplication), with no snapshot kept. An allocation's spec is put once per generation, so a copy would
     * cost its size in memory (about 2.5 KB per running allocation) for almost no duplicate; task states, put on
     * every task event, keep one ({@link TaskStateSnapshots}).
     */
    private void putModel(Bucket bucket, String key, Object value) {
        store.put(bucket, key, codec.encodeModel(value));
    }

    private static void requireValue(Object value, Bucket bucket, String key) {
        if (value == null) {
            throw new IllegalArgumentException(
                    "cannot store null under " + bucket.storedName() + "/" + key + ": delete the allocation instead");
        }
    }

    private Optional<byte[]> get(Bucket bucket, String key) {
        return store.get(bucket, key);
    }
}
