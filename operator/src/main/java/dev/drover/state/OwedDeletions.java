package dev.drover.state;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Deletions not yet durable (in flight, or failed), in the order they were asked for. A put of a key one covers
 * applies it first ({@link #settleBefore}), so a deletion written again late cannot undo a newer put.
 */
final class OwedDeletions {

    private final List<Deletion> owed = new CopyOnWriteArrayList<>();
    /** Orders submitting an owed deletion against puts of the keys it covers. */
    private final ReentrantLock order = new ReentrantLock();

    private final Function<Deletion, CompletableFuture<Void>> submit;

    /** @param submit queues a deletion in the store; marks it {@link Deletion#failed} when the store fails it */
    OwedDeletions(Function<Deletion, CompletableFuture<Void>> submit) {
        this.submit = submit;
    }

    boolean isEmpty() {
        return owed.isEmpty();
    }

    /**
     * Submits {@code d}, owed until {@link #paid}: a put of a covered key arriving meanwhile applies it first.
     * {@code meanwhile} runs after submitting, before any such put can.
     */
    CompletableFuture<Void> owe(Deletion d, Runnable meanwhile) {
        order.lock();
        try {
            owed.add(d);
            CompletableFuture<Void> durable = submit.apply(d);
            meanwhile.run();
            return durable;
        } finally {
            order.unlock();
        }
    }

    /** {@code d} is durable. */
    void paid(Deletion d) {
        owed.remove(d);
    }

    /**
     * Applies, in order, the owed deletions that cover the key, before a put of it. When the store fails one,
     * {@code ifStillOwed} runs (before any other deletion or put may go ahead) and the failure is thrown.
     */
    void settleBefore(Bucket bucket, String key, Runnable ifStillOwed) {
        List<Deletion> covering =
                owed.stream().filter(d -> d.covers(bucket, key)).toList();
        if (covering.isEmpty()) {
            return;
        }
        order.lock();
        try {
            for (Deletion d : covering) {
                if (owed.contains(d)) {
                    Durable.await(submit.apply(d), null, "deletion");
                    owed.remove(d);
                }
            }
        } catch (StateStoreException e) {
            ifStillOwed.run();
            throw e;
        } finally {
            order.unlock();
        }
    }

    /** Applies every owed deletion, in order; false when the store fails one (it stays owed, and so do the rest). */
    boolean settleAll() {
        order.lock();
        try {
            for (Deletion d : owed) {
                Durable.await(submit.apply(d), null, "deletion");
                owed.remove(d);
            }
            return true;
        } catch (StateStoreException e) {
            return false;
        } finally {
            order.unlock();
        }
    }

    /** The owed deletions the store failed at least once (the others are merely in flight). */
    Stream<Deletion> failed() {
        return owed.stream().filter(d -> d.failed);
    }

    /** A deletion of keys and prefixes in one transaction. Identity matters: equal ones are distinct. */
    static final class Deletion {
        private final List<Mutation> mutations;
        /** The store failed it at least once (else it is merely in flight). */
        volatile boolean failed;

        Deletion(List<Mutation> mutations) {
            this.mutations = mutations;
        }

        List<Mutation> mutations() {
            return mutations;
        }

        boolean coversAllocation(String allocKey) {
            return mutations.stream().anyMatch(m -> allocationOf(m).equals(allocKey));
        }

        static String allocationOf(Mutation m) {
            return switch (m) {
                case Mutation.DeletePrefix r ->
                    r.prefix().substring(0, r.prefix().length() - 1);
                case Mutation.Delete d -> d.bucket().allocationKey(d.key());
                default -> throw new IllegalArgumentException("not a deletion: " + m);
            };
        }

        boolean covers(Bucket bucket, String key) {
            for (Mutation m : mutations) {
                boolean hit = switch (m) {
                    case Mutation.Delete d -> d.bucket() == bucket && d.key().equals(key);
                    case Mutation.DeletePrefix r -> r.bucket() == bucket && r.matches(key);
                    default -> false;
                };
                if (hit) {
                    return true;
                }
            }
            return false;
        }
    }
}
