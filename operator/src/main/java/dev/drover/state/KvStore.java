package dev.drover.state;

import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;

/**
 * The durable key-value layer under {@link StateDB}: bucket and key to bytes.
 * Implementations are thread-safe.
 */
interface KvStore extends AutoCloseable {

    /**
     * Queues {@code mutations} to commit as one transaction. The future
     * completes when they are durable, or exceptionally when they could not be
     * written. Batches submitted one after another are applied in that order.
     */
    CompletableFuture<Void> submit(List<Mutation> mutations);

    Optional<byte[]> get(Bucket bucket, String key);

    /** Every entry of {@code bucket}, ordered by key. */
    SortedMap<String, byte[]> scan(Bucket bucket);

    /** Reports the stored hash of every entry, to prime deduplication at open. */
    void forEachHash(HashConsumer consumer);

    int schemaVersion();

    /** Transactions committed since open: what deduplication exists to save. */
    long transactions();

    @Override
    void close();

    @FunctionalInterface
    interface HashConsumer {
        void accept(Bucket bucket, String key, byte[] hash);
    }
}
