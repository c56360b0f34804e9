package dev.drover.state;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Write deduplication in front of a {@link KvStore}. It keeps the BLAKE2b-256
 * of the last value submitted under each key (primed from the store at open);
 * a put whose hash matches is answered from that map alone: no lock, no
 * transaction, no syscall. Cheaper still, the entry keeps an immutable
 * snapshot of the value (an immutable record itself, or a mutable value's
 * bytes), so a put of an equal one is dropped before it is hashed, a record's
 * before it is even serialized (see {@link #dropIfUnchanged}).
 *
 * <p>Invariant: a hash in the map whose write is durable is the hash of what
 * the store holds for that key. A missing entry only costs a real write, so
 * whenever in doubt (a failed write, a delete) the entry is removed.
 *
 * <p>A write the store fails (a full disk) is not forgotten: the value is kept
 * as unstored, and a deletion as owed, until {@link #retry} writes it or a
 * newer put of the key replaces it. A put never lands before a deletion asked
 * for earlier that covers its key, so a late retry cannot undo it.
 */
final class DeduplicatingStore implements AutoCloseable {

    private final KvStore store;
    private final Map<Bucket, ConcurrentHashMap<String, HashEntry>> hashes = new EnumMap<>(Bucket.class);
    /** Each allocation's keys in the per-task buckets, so that its deletion does not compare every task's. */
    private final TaskKeys taskKeys = new TaskKeys();

    private final LongAdder writes = new LongAdder();
    private final LongAdder deduplicated = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder quarantined = new LongAdder();
    /** Values the store failed to write and no newer put replaced, by {@link Unstored#id()}. */
    private final ConcurrentHashMap<String, Unstored> unstored = new ConcurrentHashMap<>();

    private final OwedDeletions owedDeletions = new OwedDeletions(this::submitDeletion);
    private final Runnable onFailure;
    private volatile String lastFailure;
    private volatile boolean closed;

    DeduplicatingStore(KvStore store) {
        this(store, () -> {});
    }

    /** @param onFailure told of every write the store failed (on the thread that saw it fail) */
    DeduplicatingStore(KvStore store, Runnable onFailure) {
        this.store = store;
        this.onFailure = onFailure;
        for (Bucket b : Bucket.values()) {
            hashes.put(b, new ConcurrentHashMap<>());
        }
        CompletableFuture<Void> stored = CompletableFuture.completedFuture(null);
        store.forEachHash((bucket, key, hash) -> {
            hashes.get(bucket).put(key, new HashEntry(hash, stored, null));
            taskKeys.primed(bucket, key);
        });
    }

    /**
     * The cheapest duplicate check: whether {@code value} equals the snapshot of
     * the last value stored under {@code key}. If so the put is dropped (once that
     * value is durable) without hashing it; returns false to fall back to
     * {@link #put(Bucket, String, byte[], Object)}. Equality is the snapshot's own
     * {@code equals}, so it must be equal only to a value that serializes to the
     * stored bytes.
     */
    boolean dropIfUnchanged(Bucket bucket, String key, Object value) {
        requireOpen();
        HashEntry known = hashes.get(bucket).get(key);
        if (known == null || known.snapshot() == null || !known.snapshot().equals(value)) {
            return false;
        }
        deduplicated.increment();
        Durable.await(known.durable(), bucket, key);
        return true;
    }

    /** The snapshot kept of the last value put under {@code key}, or null: never to be handed out or changed. */
    Object snapshot(Bucket bucket, String key) {
        HashEntry known = hashes.get(bucket).get(key);
        return known == null ? null : known.snapshot();
    }

    /** Stores {@code value} under {@code key}; returns once it is durable (or already was). */
    void put(Bucket bucket, String key, byte[] value) {
        put(bucket, key, value, null);
    }

    /**
     * As {@link #put(Bucket, String, byte[])}; {@code snapshot} is an immutable object that
     * serializes to {@code value} (or null), kept for {@link #dropIfUnchanged}. When the store fails
     * the value is kept as unstored (until {@link #retry} writes it or a newer put replaces it) and
     * a {@link StateStoreException} says so.
     */
    void put(Bucket bucket, String key, byte[] value, Object snapshot) {
        requireOpen();
        byte[] hash = Blake2b.hash256(value);
        Unstored attempt = new Unstored(bucket, key, value, hash, snapshot);
        if (!owedDeletions.isEmpty()) {
            // A deletion that covers this key is applied first: if it fails again, the put waits behind it.
            owedDeletions.settleBefore(
                    bucket,
                    key,
                    () -> hashes.get(bucket).compute(key, (k, current) -> {
                        unstored.put(attempt.id(), attempt);
                        return null;
                    }));
        }
        ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(bucket);
        HashEntry known = bucketHashes.get(key);
        if (known != null && known.matches(hash)) {
            duplicate(bucketHashes, key, known, snapshot);
            return;
        }
        // compute() locks this key's map bin only (and a task key's allocation in taskKeys): the entry is replaced
        // in the same order as puts of this key reach the store's queue, and writers of other allocations' keys do
        // not wait for each other.
        HashEntry[] outcome = new HashEntry[2];
        taskKeys.recording(
                bucket,
                key,
                () -> bucketHashes.compute(key, (k, current) -> {
                    if (current != null && current.matches(hash)) {
                        outcome[0] = current;
                        return current;
                    }
                    unstored.remove(attempt.id()); // this newer value replaces one waiting to be written again
                    outcome[1] = submit(attempt);
                    return outcome[1];
                }));
        if (outcome[0] != null) {
            duplicate(bucketHashes, key, outcome[0], snapshot);
            return;
        }
        watch(attempt, outcome[1]);
        writes.increment();
        Durable.await(outcome[1].durable(), bucket, key);
    }

    /** Queues {@code u}'s put; call within the key's compute() (which orders the key's puts), then {@link #watch}. */
    private HashEntry submit(Unstored u) {
        return new HashEntry(
                u.hash(),
                store.submit(List.of(new Mutation.Put(u.bucket(), u.key(), u.value(), u.hash()))),
                u.snapshot());
    }

    /**
     * If the put of {@code entry} fails and is still the newest of its key, keeps {@code u} to write again. Not
     * within compute(): a future failed already runs this at once, and it updates the same key.
     */
    private void watch(Unstored u, HashEntry entry) {
        entry.durable().whenComplete((ok, failure) -> {
            if (failure != null) {
                if (!(unwrap(failure) instanceof IllegalStateException)) { // not a closed store
                    hashes.get(u.bucket()).computeIfPresent(u.key(), (k, current) -> {
                        if (current != entry) {
                            return current; // a newer value is on its way
                        }
                        unstored.put(u.id(), u);
                        return null;
                    });
                } else {
                    hashes.get(u.bucket()).remove(u.key(), entry);
                }
                failed(failure); // after keeping it: the retry looks for what waits when told
            }
        });
    }

    private void duplicate(
            ConcurrentHashMap<String, HashEntry> bucketHashes, String key, HashEntry known, Object snapshot) {
        deduplicated.increment();
        if (known.snapshot() == null && snapshot != null) {
            // Entries primed from disk carry no snapshot; the first duplicate supplies one for the fast path.
            bucketHashes.replace(key, known, new HashEntry(known.hash(), known.durable(), snapshot));
        }
        // Usually complete already; otherwise the same value is on its way and this write is durable with it.
        Durable.await(known.durable(), null, key);
    }

    /**
     * Applies deletes (single keys and prefixes) in one transaction and forgets their hashes, and the unstored
     * values they cover. When the store fails, the deletion is owed: {@link #retry} applies it later, and a put
     * of a key it covers applies it first; a {@link StateStoreException} says so.
     */
    void delete(List<Mutation> deletions) {
        requireOpen();
        for (Mutation m : deletions) {
            if (!(m instanceof Mutation.Delete || m instanceof Mutation.DeletePrefix)) {
                throw new IllegalArgumentException("delete() takes deletions, got " + m);
            }
        }
        OwedDeletions.Deletion owed = new OwedDeletions.Deletion(List.copyOf(deletions));
        CompletableFuture<Void> durable = owedDeletions.owe(owed, () -> {
            // Forget hashes only after queueing: an entry of a put queued meanwhile (before or after the delete)
            // may be removed too, which merely costs that value a real write next time; the reverse order could
            // leave a hash for a value the delete then removes from disk.
            for (Mutation m : deletions) {
                ConcurrentHashMap<String, HashEntry> bucketHashes = hashes.get(m.bucket());
                switch (m) {
                    case Mutation.Delete d -> bucketHashes.remove(d.key());
                    case Mutation.DeletePrefix r -> forget(r, bucketHashes);
                    default -> throw new IllegalStateException("checked above");
                }
            }
            unstored.values().removeIf(u -> owed.covers(u.bucket(), u.key()));
        });
        deletes.increment();
        Durable.await(durable, null, "deletion");
        owedDeletions.paid(owed);
    }

    /** Forgets the hashes under {@code r}'s prefix: one allocation's, looked up, or (an odd prefix) compared. */
    private void forget(Mutation.DeletePrefix r, ConcurrentHashMap<String, HashEntry> bucketHashes) {
        String allocKey = taskKeys.exact(r);
        if (allocKey != null) {
            taskKeys.forget(r.bucket(), allocKey, bucketHashes::remove);
        } else {
            bucketHashes.keySet().removeIf(r::matches);
            taskKeys.forgetMatching(r);
        }
    }

    private CompletableFuture<Void> submitDeletion(OwedDeletions.Deletion d) {
        CompletableFuture<Void> durable = store.submit(d.mutations());
        durable.whenComplete((ok, failure) -> {
            if (failure != null) {
                d.failed = true;
                failed(failure);
            }
        });
        return durable;
    }

    /**
     * Writes again what the store failed to write: owed deletions first, in order, then each unstored value that
     * no newer put replaced. Returns whether everything is stored now.
     */
    boolean retry() {
        requireOpen();
        if (!owedDeletions.settleAll()) {
            return false;
        }
        List<HashEntry> sent = new ArrayList<>();
        // What waits now, once each: a put that fails at once is kept again, and a live view would meet it again
        for (Unstored u : List.copyOf(unstored.values())) {
            HashEntry[] entry = new HashEntry[1];
            taskKeys.recording(
                    u.bucket(),
                    u.key(),
                    () -> hashes.get(u.bucket()).compute(u.key(), (k, current) -> {
                        if (!unstored.remove(u.id(), u)) {
                            return current; // replaced by a newer put, or covered by a deletion, meanwhile
                        }
                        entry[0] = submit(u);
                        return entry[0];
                    }));
            if (entry[0] != null) {
                watch(u, entry[0]);
                sent.add(entry[0]);
            }
        }
        boolean stored = true;
        for (HashEntry entry : sent) {
            try {
                Durable.await(entry.durable(), null, "an unstored value");
                writes.increment();
            } catch (StateStoreException e) {
                stored = false;
            }
        }
        return stored && !hasUnstored();
    }

    /** Whether a hash is kept for {@code key} (for tests). */
    boolean remembers(Bucket bucket, String key) {
        return hashes.get(bucket).containsKey(key);
    }

    /** How many allocations have task keys known in {@code bucket} (for tests: a deleted one leaves none). */
    int indexedAllocations(Bucket bucket) {
        return taskKeys.allocations(bucket);
    }

    /** Whether anything waits to be written again. */
    boolean hasUnstored() {
        return !unstored.isEmpty() || owedDeletions.failed().findAny().isPresent();
    }

    /** The allocations ({@code namespace/name}) with a value or deletion waiting to be written again. */
    Set<String> unstoredAllocations() {
        Set<String> out = new TreeSet<>();
        unstored.values().forEach(u -> out.add(u.bucket().allocationKey(u.key())));
        owedDeletions
                .failed()
                .forEach(d -> d.mutations().forEach(m -> out.add(OwedDeletions.Deletion.allocationOf(m))));
        return out;
    }

    /** Whether a value or deletion of allocation {@code allocKey} waits to be written again. */
    boolean isUnstored(String allocKey) {
        return unstored.values().stream()
                        .anyMatch(u -> u.bucket().allocationKey(u.key()).equals(allocKey))
                || owedDeletions.failed().anyMatch(d -> d.coversAllocation(allocKey));
    }

    /** Why the last write failed, or null when none has. */
    String lastFailure() {
        return lastFailure;
    }

    /**
     * Moves an entry that cannot be read into the store's quarantine. Returns false when the store could not
     * write that either (the entry then stays where it is, to be found again on the next restore).
     */
    boolean quarantine(Bucket bucket, String key, String reason) {
        requireOpen();
        quarantined.increment();
        CompletableFuture<Void> moved = store.submit(List.of(new Mutation.Quarantine(bucket, key, reason)));
        hashes.get(bucket).remove(key);
        try {
            Durable.await(moved, bucket, key);
            return true;
        } catch (StateStoreException e) {
            failed(e.getCause() != null ? e.getCause() : e);
            return false;
        }
    }

    private void failed(Throwable failure) {
        failures.increment();
        lastFailure = String.valueOf(unwrap(failure).getMessage());
        onFailure.run();
    }

    private static Throwable unwrap(Throwable t) {
        return (t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null
                ? t.getCause()
                : t;
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
        return new StateStats(
                writes.sum(),
                deduplicated.sum(),
                deletes.sum(),
                store.transactions(),
                failures.sum(),
                unstored.size() + owedDeletions.failed().count(),
                quarantined.sum());
    }

    @Override
    public void close() {
        closed = true;
        store.close();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("state store is closed; no more writes are accepted");
        }
    }

    /** A value the store failed to write, kept to write again. */
    private record Unstored(Bucket bucket, String key, byte[] value, byte[] hash, Object snapshot) {
        String id() {
            return bucket.storedName() + '\n' + key;
        }
    }

    private record HashEntry(byte[] hash, CompletableFuture<Void> durable, Object snapshot) {
        boolean matches(byte[] other) {
            return Arrays.equals(hash, other);
        }
    }
}
