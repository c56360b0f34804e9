package dev.drover.state;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Write deduplication in front of a {@link KvStore}. It keeps the BLAKE2b-256
 * of the last value submitted under each key (primed from the store at open);
 * a put whose hash matches is answered from that map alone: no lock, no
 * transaction, no syscall. Cheaper still, the entry keeps an immutable
 * snapshot of the value, so a put of an equal object is dropped before it is
 * even serialized (see {@link #dropIfUnchanged}).
 *
 * <p>Invariant: a hash in the map whose write is durable is the hash of what
 * the store holds for that key. A missing entry only costs a real write, so
 * whenever in doubt (a failed write, a delete) the entry is removed.
 */
final class DeduplicatingStore implements AutoCloseable {

    private final KvStore store;
    private final Map<Bucket, ConcurrentHashMap<String, HashEntry>> hashes = new EnumMap<>(Bucket.class);
    private final LongAdder writes = new LongAdder();
    private final LongAdder deduplicated = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private volatile boolean closed;

    DeduplicatingStore(KvStore store) {
        this.store = store;
        for (Bucket b : Bucket.values()) {
            hashes.put(b, new ConcurrentHashMap<>());
        }
        CompletableFuture<Void> stored = CompletableFuture.completedFuture(null);
        store.forEachHash((bucket, key, hash) -> hashes.get(bucket).put(key, new HashEntry(hash, stored, null)));
    }

    /**
     * The cheapest duplicate check: whether {@code value} equals the snapshot of
     * the last value stored under {@code key}. If so the put is dropped (once that
     * value is durable) without even serializing; returns false to fall back to
     * {@link #put(Bucket, String, byte[], Object)}. Equality is the value's own
     * {@code equals}: a JSON object with the same fields in another order is a
     * duplicate too, which is right for JSON and keeps the stored bytes as they were.
     */
    boolean dropIfUnchanged(Bucket bucket, String key, Object value) {
        requireOpen();
        HashEntry known = hashes.get(bucket).get(key);
        if (known == null || known.snapshot() == null || !known.snapshot().equals(value)) {
            return false;
        }
        deduplicated.increment();
        await(known.durable(), bucket, key);
        return true;
    }

    /** Stores {@code value} under {@code key}; returns once it is durable (or already was). */
    void put(Bucket bucket, String key, byte[] value) {
        put(bucket, key, value, null);
    }

    /**
     * As {@link #put(Bucket, String, byte[])}; {@code snapshot} is an immutable object that
     * serializes to {@code value} (or null), kept for {@link #dropIfUnchanged}.
     */
    void put(Bucket bucket, String key, byte[] value, Object snapshot) {
        requireOpen();
        byte[] hash = Blake2b.hash256(value);
        ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(bucket);
        HashEntry known = bucketHashes.get(key);
        if (known != null && known.matches(hash)) {
            duplicate(bucketHashes, key, known, snapshot);
            return;
        }
        // compute() locks this key's map bin only: the entry is replaced in the same order as puts of this key
        // reach the store's queue, and writers of other keys do not wait for each other.
        HashEntry[] outcome = new HashEntry[2];
        bucketHashes.compute(key, (k, current) -> {
            if (current != null && current.matches(hash)) {
                outcome[0] = current;
                return current;
            }
            HashEntry entry = new HashEntry(hash, store.submit(List.of(new Mutation.Put(bucket, key, value, hash))),
                    snapshot);
            outcome[1] = entry;
            return entry;
        });
        if (outcome[0] != null) {
            duplicate(bucketHashes, key, outcome[0], snapshot);
            return;
        }
        HashEntry written = outcome[1];
        written.durable().whenComplete((ok, failure) -> {
            if (failure != null) {
                bucketHashes.remove(key, written);
            }
        });
        writes.increment();
        await(written.durable(), bucket, key);
    }

    private void duplicate(ConcurrentHashMap<String, HashEntry> bucketHashes, String key, HashEntry known,
                           Object snapshot) {
        deduplicated.increment();
        if (known.snapshot() == null && snapshot != null) {
            // Entries primed from disk carry no snapshot; the first duplicate supplies one for the fast path.
            bucketHashes.replace(key, known, new HashEntry(known.hash(), known.durable(), snapshot));
        }
        // Usually complete already; otherwise the same value is on its way and this write is durable with it.
        await(known.durable(), null, key);
    }

    /** Applies deletes (single keys and prefixes) in one transaction and forgets their hashes. */
    void delete(List<Mutation> deletions) {
        requireOpen();
        for (Mutation m : deletions) {
            if (m instanceof Mutation.Put p) {
                throw new IllegalArgumentException("delete() takes deletions, got a put of " + p.bucket() + "/" + p.key());
            }
        }
        CompletableFuture<Void> durable = store.submit(deletions);
        // Forget hashes only after queueing: an entry of a put queued meanwhile (before or after the delete)
        // may be removed too, which merely costs that value a real write next time; the reverse order could
        // leave a hash for a value the delete then removes from disk.
        for (Mutation m : deletions) {
            ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(m.bucket());
            switch (m) {
                case Mutation.Delete d -> bucketHashes.remove(d.key());
                case Mutation.DeletePrefix r -> bucketHashes.keySet().removeIf(r::matches);
                case Mutation.Put p -> throw new IllegalStateException("checked above");
            }
        }
        deletes.increment();
        await(durable, null, "deletion");
    }

    Optional<byte[]> get(Bucket bucket, String key) {
        return store.get(bucket, key);
    }

    SortedMap<String, byte[]> scan(Bucket bucket) {
        return store.scan(bucket);
    }

    int schemaVersion() {
        return store.schemaVersion();
    }

    StateStats stats() {
        return new StateStats(writes.sum(), deduplicated.sum(), deletes.sum(), store.transactions());
    }

    @Override
    public void close() {
        closed = true;
        store.close();
    }

    private static void await(CompletableFuture<Void> durable, Bucket bucket, String key) {
        String what = bucket == null ? key : bucket.storedName() + "/" + key;
        try {
            durable.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StateStoreException("interrupted while waiting for the write of " + what
                    + " to become durable; it may or may not have been stored", e);
        } catch (ExecutionException | CancellationException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof IllegalStateException closed) {
                throw closed;
            }
            throw new StateStoreException("could not store " + what + ": " + cause.getMessage(), cause);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("state store is closed; no more writes are accepted");
        }
    }

    /**
     * @param snapshot an immutable value that serializes to what was stored, or null: equal to the
     *                 next value means a duplicate without serializing it
     */
    private record HashEntry(byte[] hash, CompletableFuture<Void> durable, Object snapshot) {
        boolean matches(byte[] other) {
            return Arrays.equals(hash, other);
        }
    }
}
