package dev.drover.state;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The keys of each allocation's entries in the per-task buckets, for {@link DeduplicatingStore}: deleting an
 * allocation forgets its tasks' hashes by looking up its own keys, where a scan of every task's entry made the
 * deletion of N allocations cost N² comparisons.
 *
 * <p>A key is recorded in the same step that puts its entry in the hash map, under the lock of its allocation's
 * record, and {@link #forget} takes that record and removes the entries under the same lock: an entry put before
 * a deletion is found by it, one put after is recorded afresh for the next. Entries removed otherwise (a failed
 * write) leave their key recorded, which a deletion then removes from the map again, to no effect.
 *
 * <p>The agent writes task keys as {@code namespace/name/task}, none of whose parts holds a '/'. A key with more
 * (a damaged store read at start) is not found that way under the allocation a deletion names: once one is seen
 * in a bucket, deletions in that bucket compare every key again ({@link #exact}).
 */
final class TaskKeys {

    private final Map<Bucket, ConcurrentHashMap<String, List<String>>> byAllocation = new EnumMap<>(Bucket.class);
    /** The buckets where a key with more than two '/' was seen. */
    private final Set<Bucket> irregular = ConcurrentHashMap.newKeySet();

    TaskKeys() {
        for (Bucket b : Bucket.values()) {
            if (b.perTask()) {
                byAllocation.put(b, new ConcurrentHashMap<>());
            }
        }
    }

    /** Records {@code key}, read from the store at open (before any other use). */
    void primed(Bucket bucket, String key) {
        if (bucket.perTask()) {
            noteShape(bucket, key);
            byAllocation.get(bucket).merge(bucket.allocationKey(key), List.of(key), (keys, one) -> with(keys, key));
        }
    }

    /** Before its entry is put: a deletion queued after that sees the bucket irregular and compares every key. */
    private void noteShape(Bucket bucket, String key) {
        if (slashes(key) > 2) {
            irregular.add(bucket);
        }
    }

    /**
     * Runs {@code put}, which puts or replaces {@code key}'s entry in the hash map and returns it (null: it left the
     * key absent), under the lock of the key's allocation, and records the key when an entry is there.
     */
    void recording(Bucket bucket, String key, Supplier<?> put) {
        if (!bucket.perTask()) {
            put.get();
            return;
        }
        noteShape(bucket, key);
        byAllocation.get(bucket).compute(bucket.allocationKey(key), (alloc, keys) -> {
            if (put.get() == null) {
                return keys;
            }
            return keys == null ? List.of(key) : with(keys, key);
        });
    }

    /**
     * The allocation key that {@code prefix} names exactly ({@code namespace/name/} less its '/'), when a deletion of
     * it may look up the keys recorded for it; null when it must compare every key.
     */
    String exact(Mutation.DeletePrefix prefix) {
        String p = prefix.prefix();
        boolean whole =
                prefix.bucket().perTask() && !irregular.contains(prefix.bucket()) && p.endsWith("/") && slashes(p) == 2;
        return whole ? p.substring(0, p.length() - 1) : null;
    }

    /** Takes allocation {@code allocKey}'s keys of {@code bucket}, calling {@code remove} on each under its lock. */
    void forget(Bucket bucket, String allocKey, Consumer<String> remove) {
        byAllocation.get(bucket).computeIfPresent(allocKey, (alloc, keys) -> {
            keys.forEach(remove);
            return null;
        });
    }

    /** After a deletion that compared every key with {@code prefix}: drops the allocations whose keys all matched. */
    void forgetMatching(Mutation.DeletePrefix prefix) {
        if (prefix.bucket().perTask()) {
            byAllocation.get(prefix.bucket()).keySet().removeIf(alloc -> (alloc + "/").startsWith(prefix.prefix()));
        }
    }

    /** How many allocations have keys recorded in {@code bucket}. */
    int allocations(Bucket bucket) {
        return byAllocation.get(bucket).size();
    }

    /** {@code keys} with {@code key} (itself when it holds it already). */
    private static List<String> with(List<String> keys, String key) {
        if (keys.contains(key)) {
            return keys;
        }
        List<String> out = new ArrayList<>(keys.size() + 1);
        out.addAll(keys);
        out.add(key);
        return List.copyOf(out);
    }

    private static int slashes(String s) {
        int n = 0;
        for (int i = s.indexOf('/'); i >= 0; i = s.indexOf('/', i + 1)) {
            n++;
        }
        return n;
    }
}
