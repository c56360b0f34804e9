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
import java.util.concurrent.locks.ReentrantLock;

/**
 * Write deduplication in front of a {@link KvStore}. It keeps the BLAKE2b-256
 * of the last value submitted under each key (primed from the store at open);
 * a put whose hash matches is answered from that map alone: no lock, no
 * transaction, no syscall.
 *
 * <p>Invariant: a hash in the map whose write is durable is the hash of what
 * the store holds for that key. A missing entry only costs a real write, so
 * whenever in doubt (a failed write, a delete) the entry is removed.
 */
final class DeduplicatingStore implements AutoCloseable {

    private final KvStore store;
    private final Map<Bucket, ConcurrentHashMap<String, HashEntry>> hashes = new EnumMap<>(Bucket.class);
    /** Orders map updates exactly as submissions reach the store; duplicates never take it. */
    private final ReentrantLock submitLock = new ReentrantLock();
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
        store.forEachHash((bucket, key, hash) -> hashes.get(bucket).put(key, new HashEntry(hash, stored)));
    }

    /** Stores {@code value} under {@code key}; returns once it is durable (or already was). */
    void put(Bucket bucket, String key, byte[] value) {
        if (closed) {
            throw new IllegalStateException("state store is closed; no more writes are accepted");
        }
        byte[] hash = Blake2b.hash256(value);
        ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(bucket);
        HashEntry known = bucketHashes.get(key);
        if (known != null && known.matches(hash)) {
            deduplicated.increment();
            // Usually complete already; otherwise the same value is on its way and this write is durable with it.
            await(known.durable(), bucket, key);
            return;
        }
        CompletableFuture<Void> durable;
        submitLock.lock();
        try {
            known = bucketHashes.get(key);
            if (known != null && known.matches(hash)) {
                durable = null;
            } else {
                durable = store.submit(List.of(new Mutation.Put(bucket, key, value, hash)));
                HashEntry entry = new HashEntry(hash, durable);
                bucketHashes.put(key, entry);
                durable.whenComplete((ok, failure) -> {
                    if (failure != null) {
                        bucketHashes.remove(key, entry);
                    }
                });
            }
        } finally {
            submitLock.unlock();
        }
        if (durable == null) {
            deduplicated.increment();
            await(known.durable(), bucket, key);
            return;
        }
        writes.increment();
        await(durable, bucket, key);
    }

    /** Applies deletes (single keys and prefixes) in one transaction and forgets their hashes. */
    void delete(List<Mutation> deletions) {
        CompletableFuture<Void> durable;
        submitLock.lock();
        try {
            for (Mutation m : deletions) {
                ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(m.bucket());
                switch (m) {
                    case Mutation.Delete d -> bucketHashes.remove(d.key());
                    case Mutation.DeletePrefix r -> bucketHashes.keySet().removeIf(r::matches);
                    case Mutation.Put p -> throw new IllegalArgumentException("delete() takes deletions, got a put of "
                            + p.bucket() + "/" + p.key());
                }
            }
            durable = store.submit(deletions);
        } finally {
            submitLock.unlock();
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

    private record HashEntry(byte[] hash, CompletableFuture<Void> durable) {
        boolean matches(byte[] other) {
            return Arrays.equals(hash, other);
        }
    }
}
