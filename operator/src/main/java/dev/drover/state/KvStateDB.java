package dev.drover.state;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/** {@link StateDB} over the key-value layer: values as JSON, writes deduplicated. */
final class KvStateDB implements StateDB {

    private static final TypeReference<List<DeviceReservation>> RESERVATIONS = new TypeReference<>() {
    };

    private final DeduplicatingStore store;
    private final StateCodec codec = new StateCodec();

    KvStateDB(KvStore kv) {
        DeduplicatingStore opened;
        try {
            opened = new DeduplicatingStore(kv);
        } catch (RuntimeException e) {
            kv.close();
            throw e;
        }
        this.store = opened;
    }

    @Override
    public int schemaVersion() {
        return store.schemaVersion();
    }

    @Override
    public void putAllocation(AllocId id, JsonNode spec) {
        requireValue(spec, Bucket.ALLOC, id.key());
        put(Bucket.ALLOC, id.key(), spec, JsonNode::deepCopy);
    }

    @Override
    public Optional<JsonNode> getAllocation(AllocId id) {
        return get(Bucket.ALLOC, id.key()).map(b -> codec.tree(b, Bucket.ALLOC, id.key()));
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
    public void putTaskState(AllocId id, String task, JsonNode state) {
        requireValue(state, Bucket.TASK_STATE, id.taskKey(task));
        put(Bucket.TASK_STATE, id.taskKey(task), state, JsonNode::deepCopy);
    }

    @Override
    public Optional<JsonNode> getTaskState(AllocId id, String task) {
        String key = id.taskKey(task);
        return get(Bucket.TASK_STATE, key).map(b -> codec.tree(b, Bucket.TASK_STATE, key));
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
    public List<StoredAllocation> loadAll() {
        Map<Bucket, SortedMap<String, byte[]>> buckets = new java.util.EnumMap<>(Bucket.class);
        for (Bucket b : Bucket.values()) {
            buckets.put(b, store.scan(b));
        }
        TreeMap<String, AllocId> ids = new TreeMap<>();
        buckets.forEach((bucket, entries) -> entries.keySet().forEach(key -> {
            String allocKey = bucket.perTask() ? key.substring(0, key.lastIndexOf('/')) : key;
            ids.computeIfAbsent(allocKey, AllocId::parse);
        }));
        List<StoredAllocation> restored = new ArrayList<>(ids.size());
        for (AllocId id : ids.values()) {
            String key = id.key();
            Optional<JsonNode> spec = Optional.ofNullable(buckets.get(Bucket.ALLOC).get(key))
                    .map(b -> codec.tree(b, Bucket.ALLOC, key));
            Optional<AllocRunnerState> state = Optional.ofNullable(buckets.get(Bucket.ALLOC_STATE).get(key))
                    .map(b -> codec.decode(b, AllocRunnerState.class, Bucket.ALLOC_STATE, key));
            List<DeviceReservation> devices = Optional.ofNullable(buckets.get(Bucket.DEVICES).get(key))
                    .map(b -> codec.decode(b, RESERVATIONS, Bucket.DEVICES, key)).orElse(List.of());
            restored.add(new StoredAllocation(id, spec, state, devices, tasksOf(id, buckets)));
        }
        return List.copyOf(restored);
    }

    private SortedMap<String, StoredTask> tasksOf(AllocId id, Map<Bucket, SortedMap<String, byte[]>> buckets) {
        String prefix = id.key() + "/";
        TreeMap<String, StoredTask> tasks = new TreeMap<>();
        for (String key : taskKeys(prefix, buckets)) {
            String name = key.substring(prefix.length());
            Optional<TaskLocalState> local = Optional.ofNullable(buckets.get(Bucket.TASK_LOCAL).get(key))
                    .map(b -> codec.decode(b, TaskLocalState.class, Bucket.TASK_LOCAL, key));
            Optional<JsonNode> state = Optional.ofNullable(buckets.get(Bucket.TASK_STATE).get(key))
                    .map(b -> codec.tree(b, Bucket.TASK_STATE, key));
            tasks.put(name, new StoredTask(name, local, state));
        }
        return tasks;
    }

    private static List<String> taskKeys(String prefix, Map<Bucket, SortedMap<String, byte[]>> buckets) {
        TreeMap<String, Boolean> keys = new TreeMap<>();
        for (Bucket b : List.of(Bucket.TASK_LOCAL, Bucket.TASK_STATE)) {
            // '0' follows '/', so this is exactly the keys under prefix.
            buckets.get(b).subMap(prefix, prefix.substring(0, prefix.length() - 1) + '0')
                    .keySet().forEach(k -> keys.put(k, true));
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
                new Mutation.DeletePrefix(Bucket.TASK_LOCAL, tasks),
                new Mutation.DeletePrefix(Bucket.TASK_STATE, tasks)));
    }

    @Override
    public StateStats stats() {
        return store.stats();
    }

    @Override
    public void close() {
        store.close();
    }

    /**
     * @param snapshotOf makes an immutable object equal to {@code value}, only for a value that is
     *                   written: the records here are immutable and their own snapshot; a JsonNode is
     *                   mutable, so a deep copy (a caller changing it later must not make it "equal")
     */
    private <T> void put(Bucket bucket, String key, T value, UnaryOperator<T> snapshotOf) {
        if (store.dropIfUnchanged(bucket, key, value)) {
            return;
        }
        store.put(bucket, key, codec.encode(value), snapshotOf.apply(value));
    }

    private static void requireValue(Object value, Bucket bucket, String key) {
        if (value == null) {
            throw new IllegalArgumentException("cannot store null under " + bucket.storedName() + "/" + key
                    + ": delete the allocation instead");
        }
    }

    private Optional<byte[]> get(Bucket bucket, String key) {
        return store.get(bucket, key);
    }
}
