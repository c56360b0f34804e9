package dev.drover.state;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/** The key-value layer in memory, for tests: same contract, nothing survives close. */
final class MemoryKvStore implements KvStore {

    static final int SCHEMA_VERSION = SqliteSchema.CURRENT_VERSION;

    private final Map<Bucket, ConcurrentSkipListMap<String, Entry>> buckets = new EnumMap<>(Bucket.class);
    private final AtomicLong transactions = new AtomicLong();
    /** Quarantined entries by bucket and key, with their reason: kept, as the durable store keeps them. */
    private final Map<String, Quarantined> quarantine = new java.util.concurrent.ConcurrentHashMap<>();

    private volatile boolean closed;

    MemoryKvStore() {
        for (Bucket b : Bucket.values()) {
            buckets.put(b, new ConcurrentSkipListMap<>());
        }
    }

    @Override
    public synchronized CompletableFuture<Void> submit(List<Mutation> mutations) {
        requireOpen();
        for (Mutation m : mutations) {
            ConcurrentSkipListMap<String, Entry> bucket = buckets.get(m.bucket());
            switch (m) {
                case Mutation.Put put ->
                    bucket.put(
                            put.key(), new Entry(put.value().clone(), put.hash().clone()));
                case Mutation.Delete delete -> bucket.remove(delete.key());
                case Mutation.DeletePrefix range -> bucket.keySet().removeIf(range::matches);
                case Mutation.Quarantine q -> {
                    Entry moved = bucket.remove(q.key());
                    if (moved != null) {
                        quarantine.put(
                                q.bucket().storedName() + "/" + q.key(), new Quarantined(moved.value(), q.reason()));
                    }
                }
            }
        }
        transactions.incrementAndGet();
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Optional<byte[]> get(Bucket bucket, String key) {
        requireOpen();
        return Optional.ofNullable(buckets.get(bucket).get(key))
                .map(e -> e.value().clone());
    }

    @Override
    public SortedMap<String, byte[]> scan(Bucket bucket) {
        requireOpen();
        TreeMap<String, byte[]> copy = new TreeMap<>();
        buckets.get(bucket).forEach((k, e) -> copy.put(k, e.value().clone()));
        return Collections.unmodifiableSortedMap(copy);
    }

    @Override
    public void forEachHash(HashConsumer consumer) {
        buckets.forEach((b, entries) ->
                entries.forEach((k, e) -> consumer.accept(b, k, e.hash().clone())));
    }

    @Override
    public int schemaVersion() {
        return SCHEMA_VERSION;
    }

    @Override
    public long transactions() {
        return transactions.get();
    }

    @Override
    public void close() {
        closed = true;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("in-memory state store is closed");
        }
    }

    /** The entries quarantined so far, as {@code bucket/key} to reason. */
    Map<String, String> quarantined() {
        Map<String, String> out = new TreeMap<>();
        quarantine.forEach((k, q) -> out.put(k, q.reason()));
        return out;
    }

    private record Entry(byte[] value, byte[] hash) {}

    private record Quarantined(byte[] value, String reason) {}
}
